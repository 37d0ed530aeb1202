import { blockHeader, GENERATED_NOTICE, hashHeader, slashHeader } from "../header.js";

/** A TypeScript string literal (JSON quoting is valid TS and stable). */
export function str(value: string): string {
  return JSON.stringify(value);
}

/** A literal for any JSON value: enum members and defaults. */
export function literal(value: unknown): string {
  return JSON.stringify(value ?? null);
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** An object key: bare when it is an identifier, quoted otherwise. */
export function key(name: string): string {
  return IDENT.test(name) ? name : str(name);
}

/** Property access that survives field names which are not identifiers. */
export function prop(object: string, name: string): string {
  return IDENT.test(name) ? `${object}.${name}` : `${object}[${str(name)}]`;
}

/** Indents every non-empty line by `n` spaces. */
export function indent(text: string, n: number): string {
  const pad = " ".repeat(n);
  return text
    .split("\n")
    .map((l) => (l === "" ? l : pad + l))
    .join("\n");
}

/**
 * Prefixes the `@generated` notice in the comment syntax of the file type. JSON has no comments:
 * package.json gets a top-level "//" key instead (see package-json.ts); tsconfig.json is JSONC.
 */
export function withHeader(path: string, content: string): string {
  const base = path.split("/").pop() ?? path;
  if (/\.(tsx?|mjs|cjs|js|jsonc)$/.test(base) || base === "tsconfig.json") return slashHeader() + content;
  if (base.endsWith(".css")) return blockHeader() + content;
  if (base.endsWith(".svg")) return `<!-- ${GENERATED_NOTICE} -->\n${content}`;
  if (base === "Dockerfile" || base.startsWith(".")) return hashHeader() + content;
  if (base.endsWith(".json")) return content;
  throw new Error(`no @generated header style for ${path}`);
}

export { GENERATED_NOTICE };

/**
 * The line width of the generated app's biome.jsonc. Lines the emitters assemble are laid out as
 * biome's formatter lays them out; a file with a line still too long goes through Biome itself (the
 * format stage, ../format.ts), which is cheap only while that stays rare.
 */
export const LINE_WIDTH = 140;

/**
 * `head` + a bracketed list + `tail` at indentation `pad`, as biome formats it: on one line when
 * that line fits LINE_WIDTH, otherwise one item per line, each with a trailing comma. Objects and
 * named imports take `{}` (spaces inside on one line), arrays `[]`.
 */
export function fitList(pad: string, head: string, items: readonly string[], tail: string, brackets: "{}" | "[]"): string {
  if (items.length === 0) return `${pad}${head}${brackets}${tail}`;
  const [open, close] = brackets === "{}" ? ["{ ", " }"] : ["[", "]"];
  const flat = `${pad}${head}${open}${items.join(", ")}${close}${tail}`;
  if (flat.length <= LINE_WIDTH) return flat;
  return `${pad}${head}${brackets[0]}\n${items.map((i) => `${pad}  ${i},`).join("\n")}\n${pad}${brackets[1]}${tail}`;
}

/** `head` and `body` on one line when it fits, otherwise `body` on the next line, indented once more. */
export function fitBreak(pad: string, head: string, body: string): string {
  const flat = `${pad}${head} ${body}`;
  return flat.length <= LINE_WIDTH ? flat : `${pad}${head}\n${pad}  ${body}`;
}

/** A self-closing JSX element: on one line when it fits, otherwise one attribute per line. */
export function fitElement(pad: string, tag: string, attrs: readonly string[]): string {
  const flat = `${pad}<${tag} ${attrs.join(" ")} />`;
  if (flat.length <= LINE_WIDTH) return flat;
  return `${pad}<${tag}\n${attrs.map((a) => `${pad}  ${a}`).join("\n")}\n${pad}/>`;
}

/** A JSX prop whose value is an arrow returning one element (`name={(a) => <El />}`), laid out as biome does. */
export function fitElementProp(pad: string, name: string, params: string, tag: string, attrs: readonly string[]): string {
  const flat = `${pad}${name}={${params} => <${tag} ${attrs.join(" ")} />}`;
  if (flat.length <= LINE_WIDTH) return flat;
  return `${pad}${name}={${params} => (\n${fitElement(`${pad}  `, tag, attrs)}\n${pad})}`;
}

/**
 * Biome's natural order for the names inside an import's braces (its organizeImports action):
 * character by character, punctuation before digits before letters, a run of digits by its value,
 * letters regardless of case, and at the first letter that differs only in case the capital first
 * (`A_b < Ab < a_b < a9 < a10 < aa < B < bOx < boA`).
 */
export function byNaturalOrder(a: string, b: string): number {
  const rank = (c: string): number => (/[0-9]/.test(c) ? 1 : /[A-Za-z]/.test(c) ? 2 : 0);
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a[i] as string;
    const cb = b[j] as string;
    const d = rank(ca) - rank(cb);
    if (d !== 0) return d;
    if (rank(ca) === 1) {
      const na = /^[0-9]+/.exec(a.slice(i))?.[0] ?? "";
      const nb = /^[0-9]+/.exec(b.slice(j))?.[0] ?? "";
      const byValue = Number(na) - Number(nb);
      if (byValue !== 0) return byValue;
      i += na.length;
      j += nb.length;
      continue;
    }
    if (ca !== cb) {
      const la = ca.toLowerCase();
      const lb = cb.toLowerCase();
      if (la !== lb) return la < lb ? -1 : 1;
      return ca === la ? 1 : -1;
    }
    i++;
    j++;
  }
  return a.length - i - (b.length - j);
}

// Biome's order of the punctuation in an import's source: the path separator first (a folder's
// modules before its siblings with longer names), then `.`, `_` and `-` (`page/x < page.x < page_x <
// page-x`), which code-unit order would not give.
const SOURCE_PUNCTUATION: Record<string, string> = { "/": "\u0001", ".": "\u0002", _: "\u0003", "-": "\u0004" };

/** Biome's order of two import sources: its natural order, with path punctuation ranked as above. */
function bySourceOrder(a: string, b: string): number {
  const key = (s: string) => s.replace(/[/._-]/g, (c) => SOURCE_PUNCTUATION[c] as string);
  return byNaturalOrder(key(a), key(b));
}

/**
 * Import lines in the order biome's organizeImports keeps them: packages, then `@/` aliases, then
 * relative paths, each group by its source, with no blank line between them.
 */
export function sortImports(lines: readonly string[]): string {
  const source = (line: string) => /from "([^"]+)";$/.exec(line)?.[1] ?? "";
  const rank = (s: string) => (s.startsWith(".") ? 2 : s.startsWith("@/") ? 1 : 0);
  const sorted = [...lines].sort((a, b) => {
    const sa = source(a);
    const sb = source(b);
    return rank(sa) - rank(sb) || bySourceOrder(sa, sb);
  });
  return sorted.join("\n");
}
