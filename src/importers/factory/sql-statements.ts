/** One SQL statement of a script, with where it starts (1-based line and column). */
export interface SqlStatement {
  text: string;
  line: number;
  column: number;
}

/**
 * Splits a SQL script into statements at top-level semicolons. A lexer, not a pattern: it knows
 * quoted strings (with '' and backslash escapes), quoted identifiers ("x" and MySQL `x`),
 * PostgreSQL dollar quoting ($$ ... $$, $tag$ ... $tag$, so function bodies stay whole), both
 * comment styles, and pg_dump's `COPY ... FROM stdin;` data blocks ending at a `\.` line. Splitting
 * first lets one unsupported statement (a function, a trigger) be skipped and reported on its own
 * while the tables around it are still read; each statement is then parsed by the SQL parser.
 */
export function splitStatements(sql: string, dialect: "postgres" | "mysql"): SqlStatement[] {
  const lex = new Lexer(sql);
  const out: SqlStatement[] = [];
  let start: { at: number; line: number; column: number } | undefined;
  const finish = (end: number): void => {
    const text = start ? sql.slice(start.at, end).trim() : "";
    if (start && text !== "") out.push({ text, line: start.line, column: start.column });
    start = undefined;
  };
  while (!lex.done()) {
    if (lex.comment() || lex.whitespace()) continue;
    start ??= { at: lex.i, line: lex.line, column: lex.col };
    if (lex.quoted(dialect) || lex.dollarQuoted()) continue;
    if (lex.peek() === ";") {
      const text = sql.slice(start.at, lex.i).trim();
      finish(lex.i);
      lex.advance(1);
      // pg_dump data: raw rows up to a line holding only `\.`.
      if (/^copy\b[\s\S]*\bfrom\s+stdin\b/i.test(text)) lex.copyData();
      continue;
    }
    lex.advance(1);
  }
  finish(sql.length);
  return out;
}

/** A cursor over the script that knows its line and column; each token method passes one kind of token, or says it is not there. */
class Lexer {
  i = 0;
  line = 1;
  col = 1;

  constructor(private readonly sql: string) {}

  done(): boolean {
    return this.i >= this.sql.length;
  }

  peek(ahead = 0): string | undefined {
    return this.sql[this.i + ahead];
  }

  advance(count: number): void {
    for (let k = 0; k < count && this.i < this.sql.length; k++) {
      if (this.sql[this.i] === "\n") {
        this.line++;
        this.col = 1;
      } else this.col++;
      this.i++;
    }
  }

  /** Passes `-- ...` to the end of the line, or `/* ... *\/`; false when no comment starts here. */
  comment(): boolean {
    if (this.peek() === "-" && this.peek(1) === "-") {
      while (!this.done() && this.peek() !== "\n") this.advance(1);
      return true;
    }
    if (this.peek() === "/" && this.peek(1) === "*") {
      this.advance(2);
      while (!this.done() && !(this.peek() === "*" && this.peek(1) === "/")) this.advance(1);
      this.advance(2);
      return true;
    }
    return false;
  }

  whitespace(): boolean {
    if (!/\s/.test(this.peek() ?? "")) return false;
    this.advance(1);
    return true;
  }

  /** Passes a quoted string or identifier ('...', "...", `...`), a doubled quote inside it included. */
  quoted(dialect: "postgres" | "mysql"): boolean {
    const ch = this.peek();
    if (ch !== "'" && ch !== '"' && ch !== "`") return false;
    // Backslash escapes: always in MySQL, only in E'...' strings in PostgreSQL.
    const before = this.sql[this.i - 1];
    const backslash = ch === "'" && (dialect === "mysql" || before === "E" || before === "e");
    this.advance(1);
    while (!this.done()) {
      if (backslash && this.peek() === "\\") {
        this.advance(2);
        continue;
      }
      if (this.peek() === ch) {
        if (this.peek(1) !== ch) break;
        this.advance(2);
        continue;
      }
      this.advance(1);
    }
    this.advance(1);
    return true;
  }

  /** Passes a dollar-quoted body ($$ ... $$, $tag$ ... $tag$) to its closing tag, or to the end. */
  dollarQuoted(): boolean {
    if (this.peek() !== "$") return false;
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(this.sql.slice(this.i, this.i + 64));
    if (!tag) return false;
    const close = this.sql.indexOf(tag[0], this.i + tag[0].length);
    this.advance((close < 0 ? this.sql.length : close + tag[0].length) - this.i);
    return true;
  }

  /** Passes pg_dump's `COPY ... FROM stdin;` rows, up to and with the line holding only `\.`. */
  copyData(): void {
    while (!this.done()) {
      const eol = this.sql.indexOf("\n", this.i);
      const row = this.sql.slice(this.i, eol < 0 ? this.sql.length : eol);
      this.advance((eol < 0 ? this.sql.length : eol + 1) - this.i);
      if (row.trim() === "\\.") break;
    }
  }
}
