import type { Expr } from "../../contracts/expression.js";
import { compileChain, compileExpr, LINE_LENGTH, pyStr } from "./python.js";

/**
 * Python expressions as a small tree, laid out the way `ruff format` (black's style) lays them out:
 * a statement stays on one line when it fits in LINE_LENGTH; otherwise its last bracket is split,
 * first with the whole content on one indented line, then, when that does not fit either, with one
 * element per line and a trailing comma, each element laid out the same way. Emitters never count
 * characters; a line this layout still leaves too long sends its file through Ruff itself (the format
 * stage, ../format.ts), which is cheap only while that stays rare.
 */
export type PyExpr =
  | string
  /** `explode`: one argument per line even when they fit on one (kept so by ruff's magic trailing comma). */
  | { kind: "call"; callee: string; args: readonly PyExpr[]; explode?: boolean }
  | { kind: "tuple" | "list" | "set"; items: readonly PyExpr[] }
  | { kind: "dict"; entries: readonly (readonly [PyExpr, PyExpr])[]; explode?: boolean }
  | { kind: "keyword"; name: string; value: PyExpr }
  | { kind: "lambda"; params: string; body: PyExpr }
  /** `a or b or c`: split before each operator, inside the parentheses of its context. */
  | { kind: "chain"; op: "and" | "or"; operands: readonly PyExpr[] }
  /** `(inner)`: a parenthesised sub-expression, split inside its parentheses. */
  | { kind: "paren"; inner: PyExpr }
  /** `name[a, b]`: a subscript (a `Literal[...]`), split like a list. */
  | { kind: "subscript"; value: string; items: readonly PyExpr[] }
  /** A string literal; too long for its line, it becomes implicitly concatenated pieces in parentheses. */
  | { kind: "string"; text: string };

export const call = (callee: string, args: readonly PyExpr[]): PyExpr => ({ kind: "call", callee, args });
/** A call or dict that always takes one line per argument or entry (a list of facts reads best so). */
export const exploded = (e: PyExpr): PyExpr =>
  typeof e === "object" && (e.kind === "call" || e.kind === "dict") ? { ...e, explode: true } : e;
export const tuple = (items: readonly PyExpr[]): PyExpr => ({ kind: "tuple", items });
export const set = (items: readonly PyExpr[]): PyExpr => ({ kind: "set", items });
export const dict = (entries: readonly (readonly [PyExpr, PyExpr])[]): PyExpr => ({ kind: "dict", entries });
export const kw = (name: string, value: PyExpr): PyExpr => ({ kind: "keyword", name, value });
export const lambda = (params: string, body: PyExpr): PyExpr => ({ kind: "lambda", params, body });
export const subscript = (value: string, items: readonly PyExpr[]): PyExpr => ({ kind: "subscript", value, items });
export const str = (text: string): PyExpr => ({ kind: "string", text });

/** The expression on one line. */
export function flat(e: PyExpr): string {
  return within(e, Number.POSITIVE_INFINITY) as string;
}

/**
 * The expression on one line when that is at most `room` characters long, else null. layout()
 * asks this at every level of a tree it splits: with the answer given up as soon as the room is
 * used up, a dict of thousands of entries costs a line's worth of work per level, not its whole
 * text each time.
 */
function within(e: PyExpr, room: number): string | null {
  if (typeof e === "string") return e.length <= room ? e : null;
  switch (e.kind) {
    case "call":
      return joined(`${e.callee}(`, e.args, ")", room);
    case "tuple":
      return e.items.length === 1 ? joined("(", e.items, ",)", room) : joined("(", e.items, ")", room);
    case "list":
      return joined("[", e.items, "]", room);
    case "set":
      return e.items.length === 0 ? within("set()", room) : joined("{", e.items, "}", room);
    case "dict":
      return joined("{", e.entries, "}", room);
    case "keyword":
      return joined(`${e.name}=`, [e.value], "", room);
    case "lambda":
      return joined(`lambda ${e.params}: `, [e.body], "", room);
    case "chain":
      return joined("", e.operands, "", room, ` ${e.op} `);
    case "paren":
      return joined("(", [e.inner], ")", room);
    case "subscript":
      return joined(`${e.value}[`, e.items, "]", room);
    case "string":
      // The literal is at least the text and its two quotes: a long text is refused unquoted.
      return e.text.length + 2 > room ? null : within(pyStr(e.text), room);
  }
}

/** A dict entry, `key: value`, or null past `room`. */
function entry([key, value]: readonly [PyExpr, PyExpr], room: number): string | null {
  const k = within(key, room - 2);
  const v = k === null ? null : within(value, room - 2 - k.length);
  return v === null ? null : `${k}: ${v}`;
}

/** `open`, the items (a dict's entries as `key: value`) separated by `separator`, then `close`; null past `room`. */
function joined(
  open: string,
  items: readonly (PyExpr | readonly [PyExpr, PyExpr])[],
  close: string,
  room: number,
  separator = ", ",
): string | null {
  let left = room - open.length - close.length;
  if (left < 0) return null;
  let text = open;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) {
      text += separator;
      left -= separator.length;
    }
    const item = items[i] as PyExpr | readonly [PyExpr, PyExpr];
    const part = Array.isArray(item) ? entry(item as readonly [PyExpr, PyExpr], left) : within(item as PyExpr, left);
    if (part === null) return null;
    text += part;
    left -= part.length;
  }
  return text + close;
}

const pad = (n: number): string => " ".repeat(n);

/**
 * `prefix + e + suffix` at `indent` spaces, split over lines as ruff format would. `prefix` is what
 * precedes the expression on its first line (`NAME = `, `@`, `return `), `suffix` what follows it.
 */
export function layout(e: PyExpr, indent = 0, prefix = "", suffix = ""): string {
  const lead = `${pad(indent)}${prefix}`;
  if (typeof e === "object" && (e.kind === "call" || e.kind === "dict") && e.explode) {
    const items =
      e.kind === "call"
        ? e.args.map((a) => layout(a, indent + 4, "", ","))
        : e.entries.map(([k, v]) => layout(v, indent + 4, `${flat(k)}: `, ","));
    if (items.length > 0) {
      const [open, close] = e.kind === "call" ? [`${e.callee}(`, ")"] : ["{", "}"];
      return `${lead}${open}\n${items.join("\n")}\n${pad(indent)}${close}${suffix}`;
    }
  }
  if (typeof e === "string") return `${lead}${e}${suffix}`;
  const one = within(e, LINE_LENGTH - lead.length - suffix.length);
  if (one !== null) return `${lead}${one}${suffix}`;
  switch (e.kind) {
    case "keyword":
      return layout(e.value, indent, `${prefix}${e.name}=`, suffix);
    case "lambda": {
      // ruff splits a long lambda body that ends in brackets (a call) inside those brackets, and
      // wraps any other body in parentheses, split inside them.
      if (typeof e.body === "object" && e.body.kind === "call") return layout(e.body, indent, `${prefix}lambda ${e.params}: `, suffix);
      return `${lead}lambda ${e.params}: (\n${body([e.body], indent + 4, false, e.body)}\n${pad(indent)})${suffix}`;
    }
    case "chain":
      return [
        layout(e.operands[0] as PyExpr, indent, prefix),
        ...e.operands.slice(1).map((o, i) => layout(o, indent, `${e.op} `, i === e.operands.length - 2 ? suffix : "")),
      ].join("\n");
    case "paren":
      return `${lead}(\n${body([e.inner], indent + 4, false, e.inner)}\n${pad(indent)})${suffix}`;
    case "subscript":
      return `${lead}${e.value}[\n${body(e.items, indent + 4, true)}\n${pad(indent)}]${suffix}`;
    case "string":
      return `${lead}(\n${stringPieces(e.text, indent + 4).join("\n")}\n${pad(indent)})${suffix}`;
    case "call":
      return `${lead}${e.callee}(\n${body(e.args, indent + 4, true)}\n${pad(indent)})${suffix}`;
    // A split collection literal takes one element per line, never its whole content on one
    // indented line as a call's arguments may (ruff breaks every separator of the group at once).
    case "tuple":
      return `${lead}(\n${elements(e.items, indent + 4)}\n${pad(indent)})${suffix}`;
    case "list":
      return `${lead}[\n${elements(e.items, indent + 4)}\n${pad(indent)}]${suffix}`;
    case "set":
      return `${lead}{\n${elements(e.items, indent + 4)}\n${pad(indent)}}${suffix}`;
    case "dict": {
      const lines = e.entries.map(([k, v]) => layout(v, indent + 4, `${flat(k)}: `, ","));
      return `${lead}{\n${lines.join("\n")}\n${pad(indent)}}${suffix}`;
    }
  }
}

/**
 * The content of a split bracket: on one line when it fits (ruff keeps a lone argument there too,
 * without a trailing comma); otherwise one element per line, each with a trailing comma.
 */
function body(items: readonly PyExpr[], indent: number, commas: boolean, only?: PyExpr, forceComma = false): string {
  if (only !== undefined) {
    const one = within(only, LINE_LENGTH - indent);
    return one !== null ? `${pad(indent)}${one}` : layout(only, indent);
  }
  const hug = joined("", items, forceComma ? "," : "", LINE_LENGTH - indent);
  if (hug !== null) return `${pad(indent)}${hug}`;
  // A lone argument that does not fit is split itself, without a comma after it.
  if (items.length === 1 && !forceComma) return layout(items[0] as PyExpr, indent);
  return items.map((item) => layout(item, indent, "", commas ? "," : "")).join("\n");
}

function elements(items: readonly PyExpr[], indent: number): string {
  return items.map((item) => layout(item, indent, "", ",")).join("\n");
}

/**
 * Pieces of a long string, each a literal that fits on its line, split after spaces; one piece when
 * the whole literal fits inside the parentheses (ruff joins implicitly concatenated strings that fit).
 */
function stringPieces(text: string, indent: number): string[] {
  if (indent + pyStr(text).length <= LINE_LENGTH) return [`${pad(indent)}${pyStr(text)}`];
  const room = Math.max(20, LINE_LENGTH - indent - 2);
  const pieces: string[] = [];
  let current = "";
  for (const word of text.split(/(?<= )/)) {
    if (current && pyStr(current + word).length > room) {
      pieces.push(current);
      current = word;
    } else current += word;
  }
  if (current) pieces.push(current);
  return pieces.map((p) => `${pad(indent)}${pyStr(p)}`);
}

/**
 * A contract expression as Python, split before its `and`/`or` operators when it is too long;
 * a parenthesised chain inside a chain splits inside its own parentheses, a call inside its brackets.
 */
export function condition(e: Expr): PyExpr {
  const chain = compileChain(e);
  if (!chain) return callOf(compileExpr(e));
  return {
    kind: "chain",
    op: chain.op,
    operands: chain.operands.map((o, i) => {
      const inner = chain.nested[i];
      return inner !== undefined && o.startsWith("(") ? { kind: "paren", inner: condition(inner) } : callOf(o);
    }),
  };
}

const CALLEE = /^[A-Za-z_][A-Za-z0-9_.]*\(/;

/**
 * Python text of the form `callee(a, b)` as a call node (its arguments likewise), so that it splits
 * inside its brackets as ruff splits it; any other text is returned as it is.
 */
export function callOf(text: string): PyExpr {
  const head = CALLEE.exec(text);
  if (!head || !text.endsWith(")")) return text;
  const args: string[] = [];
  let depth = 0;
  let start = head[0].length;
  let quote = "";
  for (let i = start; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      if (depth === 0) {
        // The callee's own bracket closes before the end: `f(a)(b)` or `f(a) + g(b)`, not one call.
        if (i !== text.length - 1) return text;
        args.push(text.slice(start, i).trim());
      } else depth--;
    } else if (c === "," && depth === 0) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const callee = head[0].slice(0, -1);
  const items = args.filter((a, i) => a !== "" || i < args.length - 1);
  return call(callee, items.map(callOf));
}

/** `NAME = value`, laid out. */
export function assign(name: string, value: PyExpr, indent = 0): string {
  return layout(value, indent, `${name} = `);
}
