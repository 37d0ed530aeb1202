/**
 * Where the cursor stands in a contract being typed, read from indentation rather than from a
 * parse: a half-typed line rarely parses, and block YAML's indentation says enough to know which
 * mapping (for keys) or which key (for values) the cursor is in.
 */
export interface CompletionContext {
  /** Path of the mapping whose key is typed, or of the value typed (sequence indices as 0). */
  path: (string | number)[];
  onKey: boolean;
  /** What is typed so far of the key or value. */
  prefix: string;
  /** Keys already present in the mapping (for key completion). */
  siblings: string[];
}

/** A `key:` line; a key may be quoted (a guard's `"open -> done":`). */
const KEY_LINE = /^(\s*)((?:-\s+)*)("[^"]*"|'[^']*'|[^\s:#'"][^:#]*?):(?:\s+(.*))?$/;

export function completionContext(text: string, offset: number): CompletionContext {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const cur = text.slice(lineStart, offset);
  const lines = text.slice(0, lineStart).split("\n");
  lines.pop();
  const m = /^(\s*)((?:-\s+)*)(.*)$/.exec(cur) as RegExpExecArray;
  const indent = (m[1] as string).length;
  const dashes = (m[2] as string).match(/-/g)?.length ?? 0;
  const rest = m[3] as string;
  const { path, siblings } = parents(lines, indent, text.slice(lineStart));
  for (let i = 0; i < dashes; i++) path.push(0);
  const kv = /^("[^"]*"|'[^']*'|[^\s:#'"][^:#]*?):\s*(.*)$/.exec(rest);
  if (kv) {
    const value = kv[2] as string;
    path.push(keyOf(kv[1] as string));
    if (value.startsWith("[")) {
      path.push(0);
      return {
        path,
        onKey: false,
        prefix: unquote(value.slice(Math.max(value.lastIndexOf("["), value.lastIndexOf(",")) + 1).trim()),
        siblings: [],
      };
    }
    return { path, onKey: false, prefix: unquote(value), siblings: [] };
  }
  if (dashes > 0) return { path, onKey: false, prefix: unquote(rest), siblings: [] };
  return { path, onKey: true, prefix: rest, siblings: dashes > 0 ? [] : siblings };
}

/** The keys enclosing a line of `indent`, from the lines above it, and the keys beside it. */
function parents(above: string[], indent: number, after: string): { path: (string | number)[]; siblings: string[] } {
  const out: (string | number)[] = [];
  const siblings: string[] = [];
  let want = indent;
  for (let i = above.length - 1; i >= 0 && want > 0; i--) {
    const line = above[i] as string;
    if (/^\s*(#.*)?$/.test(line)) continue;
    const k = KEY_LINE.exec(line);
    const lineIndent = (/^\s*/.exec(line)?.[0] ?? "").length;
    const dashes = (/^\s*((?:-\s+)*)/.exec(line)?.[1] ?? "").length;
    const keyIndent = lineIndent + dashes;
    if (k && keyIndent === want && out.length === 0) siblings.push(keyOf(k[3] as string));
    if (k && keyIndent < want) {
      out.push(keyOf(k[3] as string));
      want = keyIndent;
    }
    if (dashes > 0 && lineIndent < want) {
      out.push(0);
      want = lineIndent;
    }
  }
  if (out.length === 0 && indent === 0) {
    for (const line of above) {
      const k = KEY_LINE.exec(line);
      if (k && (k[1] as string).length === 0 && !(k[2] as string)) siblings.push(k[3] as string);
    }
  }
  for (const line of after.split("\n").slice(1)) {
    const k = KEY_LINE.exec(line);
    const lineIndent = (/^\s*/.exec(line)?.[0] ?? "").length;
    if (line.trim() && lineIndent < indent) break;
    if (k && lineIndent === indent && !(k[2] as string)) siblings.push(k[3] as string);
  }
  return { path: out.reverse(), siblings };
}

function keyOf(s: string): string {
  return /^(["']).*\1$/.test(s) ? s.slice(1, -1) : s;
}

function unquote(s: string): string {
  return s.replace(/^['"]/, "");
}
