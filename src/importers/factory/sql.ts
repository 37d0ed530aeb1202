import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ContractType, ImportField, ImportModel, ImportTable, SourceLocation } from "../model.js";
import { ImportError } from "../model.js";
import { generatedDefault, mapTypeName } from "../type-map.js";
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
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((f) => f.endsWith(".sql"))
          .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
          .map((f) => join(path, f))
      : [path];
  } catch {
    files = [path];
  }
  if (files.length === 0) throw new ImportError("no .sql files in the directory", { file: path });
  const state = new SchemaState();
  for (const file of files) {
    const text = readSource(file);
    const d = dialect ?? detectDialect(text);
    if (d === "postgres") await loadPostgresParser();
    for (const stmt of splitStatements(text, d)) {
      const at: SourceLocation = { file, line: stmt.line, column: stmt.column };
      if (d === "postgres") applyPostgres(state, stmt, at);
      else applyMysql(state, stmt, at);
    }
  }
  return { format: "sql", files, tables: state.tables(), operations: [], notes: state.finishNotes() };
}

/** MySQL's tell-tale signs: backquoted names, AUTO_INCREMENT, ENGINE=. */
export function detectDialect(text: string): SqlDialect {
  return /`|\bAUTO_INCREMENT\b|\bENGINE\s*=/i.test(text) ? "mysql" : "postgres";
}

/** A column of either dialect, once its parser has read it. */
export interface ColumnFacts {
  name: string;
  rawType: string;
  length?: number;
  isArray?: boolean;
  enumValues?: string[];
  notNull?: boolean;
  primaryKey?: boolean;
  unique?: boolean;
  autoIncrement?: boolean;
  comment?: string;
  /** A constant default, or the text of an expression default. */
  defaultValue?: { constant: string | number | boolean } | { expression: string } | { null: true };
}

/** Types, lengths, defaults: the same rules for both dialects. */
export function columnField(state: SchemaState, t: ImportTable, c: ColumnFacts, at: SourceLocation): ImportField {
  const rawType = c.rawType.toLowerCase();
  const f: ImportField = { name: c.name, type: "string", sourceType: rawType, location: at };
  const enumValues = c.enumValues ?? state.enumType(rawType);
  const mapped: ContractType | undefined = mapTypeName(rawType);
  if (c.isArray) {
    f.type = "array";
    f.itemsType = mapped === "text" ? "string" : enumValues ? "string" : (mapped ?? "string");
  } else if (enumValues) {
    f.enum = enumValues;
  } else if (mapped) {
    f.type = rawType === "tinyint" && c.length === 1 ? "boolean" : mapped;
  } else {
    state.note(`${t.name}.${c.name}`, `type ${rawType} has no contract type; read as string`, at, "changed");
  }
  if (/serial$/.test(rawType) || c.autoIncrement) f.generated = "increment";
  if (c.length !== undefined && f.type === "string" && /char/.test(rawType)) f.constraints = { maxLength: c.length };
  if (c.notNull) f.required = true;
  if (c.primaryKey) t.primaryKey = [c.name];
  if (c.unique) f.unique = true;
  if (c.comment) f.description = c.comment;
  const d = c.defaultValue;
  if (d && "constant" in d) f.default = f.type === "boolean" && typeof d.constant === "number" ? d.constant !== 0 : d.constant;
  else if (d && "expression" in d) {
    if (/^nextval\(/i.test(d.expression)) f.generated = "increment";
    else {
      const g = generatedDefault(d.expression);
      if (g) f.generated = g;
      else state.note(`${t.name}.${c.name}`, `default expression ${d.expression} is not a constant; left out`, at);
    }
  }
  return f;
}
