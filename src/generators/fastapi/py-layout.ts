import type { Expr } from "../../contracts/expression.js";
import { compileChain, compileExpr, LINE_LENGTH } from "./python.js";

/**
 * Python expressions as a small tree, laid out the way `ruff format` (black's style) lays them out:
 * a statement stays on one line when it fits in LINE_LENGTH; otherwise its last bracket is split,
 * first with the whole content on one indented line, then, when that does not fit either, with one
 * element per line and a trailing comma, each element laid out the same way. Generated modules
 * then pass `ruff format --check` by construction, and emitters never count characters.
 */
export type PyExpr =
  | string
  | { kind: "call"; callee: string; args: readonly PyExpr[] }
  | { kind: "tuple" | "list" | "set"; items: readonly PyExpr[] }
  | { kind: "dict"; entries: readonly (readonly [PyExpr, PyExpr])[] }
  | { kind: "keyword"; name: string; value: PyExpr }
  | { kind: "lambda"; params: string; body: PyExpr }
  /** `a or b or c`: split before each operator, inside the parentheses of its context. */
  | { kind: "chain"; op: "and" | "or"; operands: readonly PyExpr[] };

export const call = (callee: string, args: readonly PyExpr[]): PyExpr => ({ kind: "call", callee, args });
export const tuple = (items: readonly PyExpr[]): PyExpr => ({ kind: "tuple", items });
export const set = (items: readonly PyExpr[]): PyExpr => ({ kind: "set", items });
export const dict = (entries: readonly (readonly [PyExpr, PyExpr])[]): PyExpr => ({ kind: "dict", entries });
export const kw = (name: string, value: PyExpr): PyExpr => ({ kind: "keyword", name, value });
export const lambda = (params: string, body: PyExpr): PyExpr => ({ kind: "lambda", params, body });

/** The expression on one line. */
export function flat(e: PyExpr): string {
  if (typeof e === "string") return e;
  switch (e.kind) {
    case "call":
      return `${e.callee}(${e.args.map(flat).join(", ")})`;
    case "tuple":
      return e.items.length === 1 ? `(${flat(e.items[0] as PyExpr)},)` : `(${e.items.map(flat).join(", ")})`;
    case "list":
      return `[${e.items.map(flat).join(", ")}]`;
    case "set":
      return e.items.length === 0 ? "set()" : `{${e.items.map(flat).join(", ")}}`;
    case "dict":
      return `{${e.entries.map(([k, v]) => `${flat(k)}: ${flat(v)}`).join(", ")}}`;
    case "keyword":
      return `${e.name}=${flat(e.value)}`;
    case "lambda":
      return `lambda ${e.params}: ${flat(e.body)}`;
    case "chain":
      return e.operands.map(flat).join(` ${e.op} `);
  }
}

const pad = (n: number): string => " ".repeat(n);

/**
 * `prefix + e + suffix` at `indent` spaces, split over lines as ruff format would. `prefix` is what
 * precedes the expression on its first line (`NAME = `, `@`, `return `), `suffix` what follows it.
 */
export function layout(e: PyExpr, indent = 0, prefix = "", suffix = ""): string {
  const one = `${pad(indent)}${prefix}${flat(e)}${suffix}`;
  if (one.length <= LINE_LENGTH || typeof e === "string") return one;
  const lead = `${pad(indent)}${prefix}`;
  switch (e.kind) {
    case "keyword":
      return layout(e.value, indent, `${prefix}${e.name}=`, suffix);
    case "lambda": {
      // ruff wraps a long lambda body in parentheses and splits inside them.
      return `${lead}lambda ${e.params}: (\n${body([e.body], indent + 4, false, e.body)}\n${pad(indent)})${suffix}`;
    }
    case "chain":
      return [
        layout(e.operands[0] as PyExpr, indent, prefix),
        ...e.operands.slice(1).map((o, i) => layout(o, indent, `${e.op} `, i === e.operands.length - 2 ? suffix : "")),
      ].join("\n");
    case "call":
      return `${lead}${e.callee}(\n${body(e.args, indent + 4, true)}\n${pad(indent)})${suffix}`;
    case "tuple":
      return `${lead}(\n${body(e.items, indent + 4, true, undefined, e.items.length === 1)}\n${pad(indent)})${suffix}`;
    case "list":
      return `${lead}[\n${body(e.items, indent + 4, true)}\n${pad(indent)}]${suffix}`;
    case "set":
      return `${lead}{\n${body(e.items, indent + 4, true)}\n${pad(indent)}}${suffix}`;
    case "dict": {
      const entries = e.entries.map(([k, v]) => ({ k, v }));
      const inner = pad(indent + 4);
      const hug = `${inner}${e.entries.map(([k, v]) => `${flat(k)}: ${flat(v)}`).join(", ")}`;
      if (hug.length <= LINE_LENGTH && entries.length > 1) return `${lead}{\n${hug}\n${pad(indent)}}${suffix}`;
      const lines = entries.map(({ k, v }) => layout(v, indent + 4, `${flat(k)}: `, ","));
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
    const one = `${pad(indent)}${flat(only)}`;
    if (one.length <= LINE_LENGTH) return one;
    return layout(only, indent);
  }
  const hug = `${pad(indent)}${items.map(flat).join(", ")}${forceComma ? "," : ""}`;
  if (hug.length <= LINE_LENGTH) return hug;
  // A lone argument that does not fit is split itself, without a comma after it.
  if (items.length === 1 && !forceComma) return layout(items[0] as PyExpr, indent);
  return items.map((item) => layout(item, indent, "", commas ? "," : "")).join("\n");
}

/** A contract expression as Python, split before its top-level `and`/`or` when it is too long. */
export function condition(e: Expr): PyExpr {
  const chain = compileChain(e);
  return chain ? { kind: "chain", ...chain } : compileExpr(e);
}

/** `NAME = value`, laid out. */
export function assign(name: string, value: PyExpr, indent = 0): string {
  return layout(value, indent, `${name} = `);
}
