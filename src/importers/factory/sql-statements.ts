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
  const out: SqlStatement[] = [];
  let i = 0;
  let line = 1;
  let col = 1;
  let start = -1;
  let startLine = 1;
  let startCol = 1;
  const n = sql.length;
  const advance = (count: number): void => {
    for (let k = 0; k < count && i < n; k++) {
      if (sql[i] === "\n") {
        line++;
        col = 1;
      } else col++;
      i++;
    }
  };
  const begin = (): void => {
    if (start < 0) {
      start = i;
      startLine = line;
      startCol = col;
    }
  };
  const finish = (end: number): void => {
    if (start >= 0) {
      const text = sql.slice(start, end).trim();
      if (text !== "") out.push({ text, line: startLine, column: startCol });
    }
    start = -1;
  };
  while (i < n) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    if (ch === "-" && next === "-") {
      while (i < n && sql[i] !== "\n") advance(1);
      continue;
    }
    if (ch === "/" && next === "*") {
      advance(2);
      while (i < n && !(sql[i] === "*" && sql[i + 1] === "/")) advance(1);
      advance(2);
      continue;
    }
    if (/\s/.test(ch)) {
      advance(1);
      continue;
    }
    begin();
    if (ch === "'" || ch === '"' || ch === "`") {
      // Backslash escapes: always in MySQL, only in E'...' strings in PostgreSQL.
      const backslash = ch === "'" && (dialect === "mysql" || sql[i - 1] === "E" || sql[i - 1] === "e");
      advance(1);
      while (i < n) {
        if (backslash && sql[i] === "\\") {
          advance(2);
          continue;
        }
        if (sql[i] === ch) {
          if (sql[i + 1] === ch) {
            advance(2);
            continue;
          }
          break;
        }
        advance(1);
      }
      advance(1);
      continue;
    }
    if (ch === "$") {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 64));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        advance((close < 0 ? n : close + tag[0].length) - i);
        continue;
      }
    }
    if (ch === ";") {
      const text = sql.slice(start, i).trim();
      finish(i);
      advance(1);
      if (/^copy\b[\s\S]*\bfrom\s+stdin\b/i.test(text)) {
        // pg_dump data: raw rows up to a line holding only `\.`.
        while (i < n) {
          const eol = sql.indexOf("\n", i);
          const row = sql.slice(i, eol < 0 ? n : eol);
          advance((eol < 0 ? n : eol + 1) - i);
          if (row.trim() === "\\.") break;
        }
      }
      continue;
    }
    advance(1);
  }
  finish(n);
  return out;
}
