import type { Expr } from "../../contracts/expression.js";
import { compareText } from "../../shared/text.js";

/**
 * Small typed helpers for emitting Python source. Strings use double quotes; JSON's escapes are a
 * subset of Python's, so JSON.stringify yields a valid Python string literal.
 */
export function pyStr(s: string): string {
  return JSON.stringify(s);
}

/** A JSON-like value as a Python literal (dict keys sorted for deterministic output). */
export function pyValue(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : String(value);
  if (typeof value === "string") return pyStr(value);
  if (Array.isArray(value)) return `[${value.map(pyValue).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => compareText(a, b));
    return `{${entries.map(([k, v]) => `${pyStr(k)}: ${pyValue(v)}`).join(", ")}}`;
  }
  return pyStr(String(value));
}

export function pyTuple(items: readonly string[]): string {
  if (items.length === 0) return "()";
  if (items.length === 1) return `(${items[0]},)`;
  return `(${items.join(", ")})`;
}

export function pyStrTuple(items: readonly string[]): string {
  return pyTuple(items.map(pyStr));
}

export function pyFrozenset(items: readonly string[]): string {
  if (items.length === 0) return "frozenset()";
  return `frozenset({${[...items].sort().map(pyStr).join(", ")}})`;
}

export function indent(text: string, spaces = 4): string {
  const pad = " ".repeat(spaces);
  return text
    .split("\n")
    .map((line) => (line === "" ? line : pad + line))
    .join("\n");
}

/** `ticket_lifecycle` -> `TICKET_LIFECYCLE`. */
export function constantName(snake: string): string {
  return snake.toUpperCase();
}

/**
 * `name` unless it is already in `taken` or ends with `suffix`, then `name` + `suffix`: a constant
 * named after a contract never takes one of the generated module's own names, and two contract
 * names still give two constants (only names ending with the suffix, or taken, get it).
 */
function apart(name: string, taken: ReadonlySet<string>, suffix: string): string {
  return taken.has(name) || name.endsWith(suffix) ? `${name}${suffix}` : name;
}

/** The module-level names of app/domain.py besides the entities' metadata. */
const DOMAIN_MODULE_NAMES = new Set(["DOMAIN", "ENTITIES"]);

/** The constant of app/domain.py holding an entity's EntityMeta (`ticket` -> `TICKET`, `domain` -> `DOMAIN_META`). */
export function metaConstant(entityName: string): string {
  return apart(constantName(entityName), DOMAIN_MODULE_NAMES, "_META");
}

/**
 * The constants of a route module not named after a contract (app/routes/<module>.py imports its
 * entity's metadata and workflow as META and WORKFLOW, so no entity name is ever one of them).
 */
export const ROUTE_MODULE_NAMES: ReadonlySet<string> = new Set([
  "ANONYMOUS",
  "AUTHENTICATED",
  "CREATE_FILL",
  "CREATE_RULES",
  "CREATE_RULES_DOC",
  "HOOKS",
  "LINKS",
  "META",
  "STATE_FILL",
  "UPDATE_FILL",
  "UPDATE_RULES",
  "UPDATE_RULES_DOC",
  "WORKFLOW",
]);

/** A role dependency list's constant, kept apart from a route module's own names (`links` -> `LINKS_ROLES`). */
export function roleSetConstant(name: string): string {
  return apart(name, ROUTE_MODULE_NAMES, "_ROLES");
}

/** A module name (a route module's, from its base path) that can be imported: keywords get a `_`. */
export function pyModuleName(name: string): string {
  return KEYWORDS.has(name) ? `${name}_` : name;
}

const PRECEDENCE = { or: 1, and: 2, not: 3, compare: 4, neg: 5, atom: 6 } as const;

/**
 * Compiles a contract expression to a Python expression over the mapping `values`. Nothing is
 * ever eval'ed: the tree is translated node by node. Ordering comparisons, `len` and `in` go
 * through app.expr helpers so that a missing value gives false instead of a TypeError.
 */
export function compileExpr(e: Expr, values = "values"): string {
  return emit(e, values).code;
}

/** Whether the Python of `e` calls app.expr: `x == true` compiles to `values.get("x") is True`, which does not. */
export function usesExprModule(e: Expr): boolean {
  return compileExpr(e).includes("expr.");
}

/**
 * The operands of a top-level `and`/`or` chain of `e`, compiled, so a long condition can be split
 * before each operator; a single operand when `e` is no such chain.
 */
export function compileChain(e: Expr, values = "values"): { op: "and" | "or"; operands: string[]; nested: (Expr | undefined)[] } | null {
  if (e.type !== "logical") return null;
  const operands: Expr[] = [];
  let node: Expr = e;
  while (node.type === "logical" && node.op === e.op) {
    operands.unshift(node.right);
    node = node.left;
  }
  operands.unshift(node);
  const p = PRECEDENCE[e.op];
  return {
    op: e.op,
    operands: operands.map((o, i) => wrap(emit(o, values), i === 0 ? p : p + 1)),
    // Operands that are chains of their own (the other operator), for a layout that splits them too.
    nested: operands.map((o) => (o.type === "logical" ? o : undefined)),
  };
}

interface Emitted {
  code: string;
  prec: number;
}

function wrap(x: Emitted, min: number): string {
  return x.prec < min ? `(${x.code})` : x.code;
}

function emit(e: Expr, v: string): Emitted {
  switch (e.type) {
    case "literal":
      return { code: pyValue(e.value), prec: PRECEDENCE.atom };
    case "list":
      return { code: `[${e.items.map((i) => emit(i, v).code).join(", ")}]`, prec: PRECEDENCE.atom };
    case "name":
      return { code: `${v}.get(${pyStr(e.name)})`, prec: PRECEDENCE.atom };
    case "call": {
      const arg = e.args[0] ? emit(e.args[0], v).code : "None";
      return { code: `expr.${e.fn === "len" ? "length" : "is_set"}(${arg})`, prec: PRECEDENCE.atom };
    }
    case "not":
      return { code: `not ${wrap(emit(e.operand, v), PRECEDENCE.not)}`, prec: PRECEDENCE.not };
    case "neg":
      return { code: `-${wrap(emit(e.operand, v), PRECEDENCE.atom)}`, prec: PRECEDENCE.neg };
    case "logical": {
      const p = PRECEDENCE[e.op];
      return { code: `${wrap(emit(e.left, v), p)} ${e.op} ${wrap(emit(e.right, v), p + 1)}`, prec: p };
    }
    case "compare": {
      const left = emit(e.left, v);
      const right = emit(e.right, v);
      const helper = { "<": "lt", "<=": "le", ">": "gt", ">=": "ge" } as const;
      switch (e.op) {
        case "<":
        case "<=":
        case ">":
        case ">=":
          return { code: `expr.${helper[e.op]}(${left.code}, ${right.code})`, prec: PRECEDENCE.atom };
        case "in":
          return { code: `expr.contains(${right.code}, ${left.code})`, prec: PRECEDENCE.atom };
        case "not in":
          return { code: `not expr.contains(${right.code}, ${left.code})`, prec: PRECEDENCE.not };
        case "==":
        case "!=": {
          // `is` for None and booleans: what ruff (E711, E712) and Python idiom ask for.
          const singleton = (x: Expr): boolean => x.type === "literal" && (x.value === null || typeof x.value === "boolean");
          const op = singleton(e.right) || singleton(e.left) ? (e.op === "==" ? "is" : "is not") : e.op;
          const l = singleton(e.left) && !singleton(e.right) ? right : left;
          const r = singleton(e.left) && !singleton(e.right) ? left : right;
          return { code: `${wrap(l, PRECEDENCE.neg)} ${op} ${wrap(r, PRECEDENCE.neg)}`, prec: PRECEDENCE.compare };
        }
      }
    }
  }
}

/** Python's keywords: no module or attribute can be imported under one. */
const KEYWORDS = new Set([
  "False",
  "None",
  "True",
  "and",
  "as",
  "assert",
  "async",
  "await",
  "break",
  "class",
  "continue",
  "def",
  "del",
  "elif",
  "else",
  "except",
  "finally",
  "for",
  "from",
  "global",
  "if",
  "import",
  "in",
  "is",
  "lambda",
  "nonlocal",
  "not",
  "or",
  "pass",
  "raise",
  "return",
  "try",
  "while",
  "with",
  "yield",
]);

/** Python keywords and BaseModel attributes a field must not be named after (it gets an alias). */
const RESERVED = new Set([
  ...KEYWORDS,
  // Names the model modules' annotations and validators use: a field named so would shadow them
  // in the class body (`list: list[str]` makes the next `list[...]` None[...]).
  "bool",
  "date",
  "datetime",
  "float",
  "int",
  "list",
  "storable_text",
  "str",
  "whole_number",
  "copy",
  "dict",
  "json",
  "schema",
  "validate",
  "construct",
  "fields",
  "parse_obj",
  "parse_raw",
  "from_orm",
  "schema_json",
  "update_forward_refs",
]);

/** The Python attribute for a contract field name (the name itself unless reserved). */
export function pyAttr(name: string): string {
  return RESERVED.has(name) || name.startsWith("model_") ? `${name}_` : name;
}

/** The dependency of app/deps.py that hands a handler the repository of `entity` (`ticket_repository`). */
export const repositoryDependency = (entity: string): string => `${entity}_repository`;

/** The `Annotated` type a handler's repository parameter is declared with (`TicketRepo`). */
export const repositoryAlias = (className: string): string => `${className}Repo`;

/** Line length of the generated Python (also set in the generated pyproject.toml for ruff). */
export const LINE_LENGTH = 120;

const STDLIB = new Set([
  "abc",
  "asyncio",
  "collections",
  "contextlib",
  "dataclasses",
  "datetime",
  "logging",
  "types",
  "typing",
  "uuid",
  "warnings",
]);

/**
 * Collects the imports of a module while its body is written and renders them the way ruff's
 * isort does: stdlib, third party, then `app`; `import x` before `from x import`; names ordered
 * constants, classes, functions; wrapped in parentheses past the line length.
 */
export class Imports {
  private readonly plain = new Set<string>();
  private readonly from = new Map<string, Set<string>>();

  add(module: string, name: string): string {
    let names = this.from.get(module);
    if (!names) {
      names = new Set();
      this.from.set(module, names);
    }
    names.add(name);
    return name;
  }

  module(name: string): void {
    this.plain.add(name);
  }

  render(): string {
    const section = (m: string): number => (STDLIB.has(m.split(".")[0] ?? "") ? 0 : m === "app" || m.startsWith("app.") ? 2 : 1);
    const groups: string[][] = [[], [], []];
    for (const m of [...this.plain].sort()) groups[section(m)]?.push(`import ${m}`);
    for (const m of [...this.from.keys()].sort()) {
      // Like ruff's isort (combine-as-imports off): each `name as alias` is a statement of its
      // own, and a module's statements are ordered by their first name.
      const names = [...(this.from.get(m) ?? [])];
      const plain = names.filter((n) => !n.includes(" as ")).sort(isortNames);
      const statements = [...(plain.length ? [plain] : []), ...names.filter((n) => n.includes(" as ")).map((n) => [n])];
      const first = (s: string[]): string => (s[0] ?? "").split(" as ")[0] ?? "";
      statements.sort((a, b) => isortNames(first(a), first(b)));
      for (const s of statements) groups[section(m)]?.push(fromImport(m, s));
    }
    return groups
      .filter((g) => g.length > 0)
      .map((g) => g.join("\n"))
      .join("\n\n");
  }
}

function fromImport(module: string, names: string[]): string {
  const oneLine = `from ${module} import ${names.join(", ")}`;
  if (oneLine.length <= LINE_LENGTH) return oneLine;
  return `from ${module} import (\n${names.map((n) => `    ${n},`).join("\n")}\n)`;
}

/** isort's order-by-type: CONSTANTS, then Classes, then functions, each case-sensitively sorted. */
function isortNames(a: string, b: string): number {
  const rank = (s: string): number => (s.length > 1 && s === s.toUpperCase() ? 0 : s[0] === s[0]?.toUpperCase() ? 1 : 2);
  const d = rank(a) - rank(b);
  if (d !== 0) return d;
  return compareText(a, b);
}

/** `name(args)` on one line when it fits, else one argument per line (as ruff format would). */
export function pyCall(name: string, args: readonly string[], lead = ""): string {
  const one = `${lead}${name}(${args.join(", ")})`;
  if (one.length <= LINE_LENGTH) return one;
  return `${lead}${name}(\n${args.map((a) => `${lead}    ${a},`).join("\n")}\n${lead})`;
}

/** `async def name(params) -> returns:` on one line when it fits, else one parameter per line. */
export function pyAsyncDef(name: string, params: readonly string[], returns: string): string {
  const one = `async def ${name}(${params.join(", ")}) -> ${returns}:`;
  if (one.length <= LINE_LENGTH) return one;
  return `async def ${name}(\n${params.map((p) => `    ${p},`).join("\n")}\n) -> ${returns}:`;
}

/**
 * A docstring: on one line when it fits, else the summary line, a blank line and `more` wrapped at
 * the line length (descriptions come from the contracts and can be of any length).
 */
export function pyDocstring(summary: string, more = "", indentBy = 0): string {
  const pad = " ".repeat(indentBy);
  const one = `${pad}"""${more ? `${summary} ${more}` : summary}"""`;
  if (one.length <= LINE_LENGTH) return one;
  const lines: string[] = [];
  let current = "";
  for (const word of more.split(/\s+/).filter(Boolean)) {
    if (current && pad.length + current.length + 1 + word.length > LINE_LENGTH) {
      lines.push(pad + current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) lines.push(pad + current);
  return [`${pad}"""${summary}`, ...(lines.length > 0 ? ["", ...lines] : []), `${pad}"""`].join("\n");
}
