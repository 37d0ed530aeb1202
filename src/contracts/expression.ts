/**
 * The small, safe expression language of `validation[].rule` and guard `condition` (docs/contracts.md):
 * literals (numbers, strings, true, false, null, lists), field names, == != < <= > >=, in, not in,
 * and, or, not, parentheses, len(x) and is_set(x). It is parsed at validate time so that mistakes
 * are located findings; generators compile the tree to their language, nothing is ever eval'ed.
 */
export type Expr =
  | { type: "literal"; value: string | number | boolean | null }
  | { type: "list"; items: Expr[] }
  | { type: "name"; name: string }
  | { type: "call"; fn: "len" | "is_set"; args: Expr[] }
  | { type: "not"; operand: Expr }
  | { type: "neg"; operand: Expr }
  | { type: "logical"; op: "and" | "or"; left: Expr; right: Expr }
  | { type: "compare"; op: CompareOp; left: Expr; right: Expr };

export type CompareOp = "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in";

export const EXPRESSION_FUNCTIONS = ["len", "is_set"] as const;

export class ExpressionError extends Error {
  /** 0-based offset into the expression text. */
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(message);
    this.offset = offset;
  }
}

type Token =
  | { kind: "num"; value: number; pos: number }
  | { kind: "str"; value: string; pos: number }
  | { kind: "ident"; value: string; pos: number }
  | { kind: "op"; value: string; pos: number }
  | { kind: "eof"; pos: number };

const KEYWORDS = new Set(["and", "or", "not", "in", "true", "false", "null"]);

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const start = i;
    if (/[0-9]/.test(ch) || (ch === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      const m = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i));
      const text = m?.[0] ?? ch;
      tokens.push({ kind: "num", value: Number(text), pos: start });
      i += text.length;
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
      const text = m?.[0] ?? ch;
      tokens.push({ kind: "ident", value: text, pos: start });
      i += text.length;
      continue;
    }
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      let value = "";
      while (j < src.length && src[j] !== ch) {
        if (src[j] === "\\" && j + 1 < src.length) {
          const next = src[j + 1] as string;
          value += next === "n" ? "\n" : next === "t" ? "\t" : next;
          j += 2;
        } else {
          value += src[j];
          j++;
        }
      }
      if (j >= src.length) throw new ExpressionError("unterminated string", start);
      tokens.push({ kind: "str", value, pos: start });
      i = j + 1;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (["==", "!=", "<=", ">="].includes(two)) {
      tokens.push({ kind: "op", value: two, pos: start });
      i += 2;
      continue;
    }
    if ("<>()[],-".includes(ch)) {
      tokens.push({ kind: "op", value: ch, pos: start });
      i++;
      continue;
    }
    throw new ExpressionError(`unexpected character '${ch}'`, start);
  }
  tokens.push({ kind: "eof", pos: src.length });
  return tokens;
}

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Expr {
    const e = this.or();
    const t = this.peek();
    if (t.kind !== "eof") throw new ExpressionError(`unexpected ${describe(t)}`, t.pos);
    return e;
  }

  private peek(): Token {
    return this.tokens[this.i] as Token;
  }
  private next(): Token {
    const t = this.peek();
    this.i++;
    return t;
  }
  private isWord(word: string, offset = 0): boolean {
    const t = this.tokens[this.i + offset];
    return t?.kind === "ident" && t.value === word;
  }
  private isOp(op: string): boolean {
    const t = this.peek();
    return t.kind === "op" && t.value === op;
  }
  private expectOp(op: string): void {
    const t = this.next();
    if (t.kind !== "op" || t.value !== op) throw new ExpressionError(`expected '${op}', found ${describe(t)}`, t.pos);
  }

  private or(): Expr {
    let left = this.and();
    while (this.isWord("or")) {
      this.next();
      left = { type: "logical", op: "or", left, right: this.and() };
    }
    return left;
  }
  private and(): Expr {
    let left = this.not();
    while (this.isWord("and")) {
      this.next();
      left = { type: "logical", op: "and", left, right: this.not() };
    }
    return left;
  }
  private not(): Expr {
    if (this.isWord("not")) {
      this.next();
      return { type: "not", operand: this.not() };
    }
    return this.comparison();
  }
  private comparison(): Expr {
    const left = this.unary();
    const t = this.peek();
    let op: CompareOp | undefined;
    if (t.kind === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(t.value)) {
      op = t.value as CompareOp;
      this.next();
    } else if (this.isWord("in")) {
      op = "in";
      this.next();
    } else if (this.isWord("not") && this.isWord("in", 1)) {
      op = "not in";
      this.next();
      this.next();
    }
    if (!op) return left;
    const right = this.unary();
    const after = this.peek();
    if (after.kind === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(after.value)) {
      throw new ExpressionError("chained comparisons are not supported; join them with 'and'", after.pos);
    }
    return { type: "compare", op, left, right };
  }
  private unary(): Expr {
    if (this.isOp("-")) {
      this.next();
      return { type: "neg", operand: this.unary() };
    }
    return this.primary();
  }
  private primary(): Expr {
    const t = this.next();
    if (t.kind === "num") return { type: "literal", value: t.value };
    if (t.kind === "str") return { type: "literal", value: t.value };
    if (t.kind === "op" && t.value === "(") {
      const e = this.or();
      this.expectOp(")");
      return e;
    }
    if (t.kind === "op" && t.value === "[") {
      const items: Expr[] = [];
      if (!this.isOp("]")) {
        items.push(this.or());
        while (this.isOp(",")) {
          this.next();
          items.push(this.or());
        }
      }
      this.expectOp("]");
      return { type: "list", items };
    }
    if (t.kind === "ident") {
      if (t.value === "true") return { type: "literal", value: true };
      if (t.value === "false") return { type: "literal", value: false };
      if (t.value === "null") return { type: "literal", value: null };
      if (KEYWORDS.has(t.value)) throw new ExpressionError(`unexpected keyword '${t.value}'`, t.pos);
      if (this.isOp("(")) {
        if (t.value !== "len" && t.value !== "is_set") {
          throw new ExpressionError(`unknown function '${t.value}' (known: len, is_set)`, t.pos);
        }
        this.next();
        const args: Expr[] = [];
        if (!this.isOp(")")) {
          args.push(this.or());
          while (this.isOp(",")) {
            this.next();
            args.push(this.or());
          }
        }
        this.expectOp(")");
        if (args.length !== 1) throw new ExpressionError(`${t.value}() takes exactly one argument`, t.pos);
        return { type: "call", fn: t.value, args };
      }
      return { type: "name", name: t.value };
    }
    throw new ExpressionError(`unexpected ${describe(t)}`, t.pos);
  }
}

function describe(t: Token): string {
  if (t.kind === "eof") return "end of expression";
  if (t.kind === "str") return `string '${t.value}'`;
  return `'${String(t.value)}'`;
}

/** Parses an expression; throws ExpressionError with the offset of the problem. */
export function parseExpression(src: string): Expr {
  if (src.trim() === "") throw new ExpressionError("empty expression", 0);
  return new Parser(tokenize(src)).parse();
}

/** Field names an expression reads, in first-seen order. */
export function expressionNames(e: Expr): string[] {
  const out: string[] = [];
  const walk = (x: Expr): void => {
    switch (x.type) {
      case "name":
        if (!out.includes(x.name)) out.push(x.name);
        return;
      case "literal":
        return;
      case "list":
        x.items.forEach(walk);
        return;
      case "call":
        x.args.forEach(walk);
        return;
      case "not":
      case "neg":
        walk(x.operand);
        return;
      case "logical":
      case "compare":
        walk(x.left);
        walk(x.right);
        return;
    }
  };
  walk(e);
  return out;
}
