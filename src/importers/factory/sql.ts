import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ImportModel, SourceLocation } from "../model.js";
import { ImportError } from "../model.js";
import { readSource } from "./read.js";
import { applyMysql } from "./sql-mysql.js";
import { applyPostgres, loadPostgresParser } from "./sql-postgres.js";
import { SchemaState } from "./sql-schema.js";
import { splitStatements } from "./sql-statements.js";

export type SqlDialect = "postgres" | "mysql";

/**
 * Reads a SQL schema (a file, or a directory of migration files read in name order) into the
 * neutral model. Statements are split by a lexer; each is parsed by a real parser: PostgreSQL's
 * own (libpg-query) or node-sql-parser's MySQL grammar. A CREATE TABLE that does not parse is an
 * error with its place; statements the model has no use for (SET, functions, grants, data) are
 * skipped and counted in the summary.
 */
export async function readSqlSchema(path: string, dialect?: SqlDialect): Promise<ImportModel> {
  const files = migrationFiles(path);
  if (files.length === 0) throw new ImportError("no .sql files in the directory (nor <name>/migration.sql folders)", { file: path });
  const texts = files.map((file) => ({ file, text: readSource(file) }));
  // One dialect for the whole history: the one Prisma locked, else what the files say together.
  const d = dialect ?? lockedDialect(path) ?? detectDialect(texts.map((t) => t.text).join("\n"));
  if (d === "postgres") await loadPostgresParser();
  const state = new SchemaState();
  for (const { file, text } of texts) {
    for (const stmt of splitStatements(text, d)) {
      const at: SourceLocation = { file, line: stmt.line, column: stmt.column };
      if (d === "postgres") applyPostgres(state, stmt, at);
      else applyMysql(state, stmt, at);
    }
  }
  return { format: "sql", files, tables: state.tables(), operations: [], notes: state.finishNotes() };
}

/**
 * The files of a schema: the file itself, or a directory's `.sql` files and its `<name>/migration.sql`
 * folders (Prisma Migrate's layout), all in name order (numbers compared as numbers).
 */
function migrationFiles(path: string): string[] {
  try {
    if (!statSync(path).isDirectory()) return [path];
  } catch {
    return [path];
  }
  const out: { key: string; file: string }[] = [];
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith(".sql")) out.push({ key: entry.name, file: join(path, entry.name) });
    else if (entry.isDirectory() && existsSync(join(path, entry.name, "migration.sql")))
      out.push({ key: entry.name, file: join(path, entry.name, "migration.sql") });
  }
  // Numeric, not code-point, order: migration tools number their files without padding (2_x before 10_x).
  return out.sort((a, b) => a.key.localeCompare(b.key, "en", { numeric: true })).map((x) => x.file);
}

/** `provider` of Prisma's migration_lock.toml beside the migrations, when there is one. */
function lockedDialect(path: string): SqlDialect | undefined {
  const lock = join(path, "migration_lock.toml");
  if (!existsSync(lock)) return undefined;
  const provider = /^\s*provider\s*=\s*"([^"]+)"/m.exec(readSource(lock))?.[1];
  return provider === "mysql" ? "mysql" : provider === "postgresql" ? "postgres" : undefined;
}

/**
 * MySQL's tell-tale signs, outside comments and strings: backquoted names, AUTO_INCREMENT, ENGINE=,
 * `USE db;`, `UNIQUE KEY` / `KEY name (...)` inside a table, `/*!40101 ... *\/` version comments.
 */
export function detectDialect(text: string): SqlDialect {
  if (/\/\*![0-9]{5}/.test(text)) return "mysql";
  const code = text
    .replace(/--[^\n]*/g, "")
    .replace(/#[^\n]*/g, "")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/'(?:[^'\\]|\\.|'')*'/g, "''");
  return /`|\bAUTO_INCREMENT\b|\bENGINE\s*=|^\s*USE\s+\w+\s*;|\bUNIQUE\s+KEY\b|^\s*(?:UNIQUE\s+|FULLTEXT\s+)?KEY\s+\w+\s*\(/im.test(code)
    ? "mysql"
    : "postgres";
}
