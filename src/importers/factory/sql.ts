import { existsSync, readdirSync, statSync } from "node:fs";
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

/** MySQL's tell-tale signs, outside comments: backquoted names, AUTO_INCREMENT, ENGINE=. */
export function detectDialect(text: string): SqlDialect {
  const code = text.replace(/--[^\n]*/g, "").replace(/\/\*[\s\S]*?\*\//g, "");
  return /`|\bAUTO_INCREMENT\b|\bENGINE\s*=/i.test(code) ? "mysql" : "postgres";
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
  /** `DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP`: the row's time of last change. */
  onUpdateNow?: boolean;
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
  if (c.defaultValue) applyDefault(state, t, f, c.defaultValue, at, c.onUpdateNow === true);
  return f;
}

/**
 * A column default: a constant (a time written as text becomes ISO 8601; `'now'::date` is the
 * database's clock), a sequence or a known function, else a note.
 */
export function applyDefault(
  state: SchemaState,
  t: ImportTable,
  f: ImportField,
  d: NonNullable<ColumnFacts["defaultValue"]>,
  at: SourceLocation,
  onUpdate = false,
): void {
  if ("constant" in d) {
    const value = f.type === "boolean" && typeof d.constant === "number" ? d.constant !== 0 : d.constant;
    if ((f.type === "date" || f.type === "datetime") && typeof value === "string") {
      if (/^(now|today|current_timestamp|current_date)$/i.test(value.trim())) {
        f.generated = onUpdate ? "now_on_update" : "now";
        return;
      }
      const iso = isoTime(value, f.type);
      if (iso === undefined) {
        state.note(`${t.name}.${f.name}`, `default ${JSON.stringify(value)} is not a ${f.type}; left out`, at);
        return;
      }
      if (iso !== value) state.note(`${t.name}.${f.name}`, `default ${JSON.stringify(value)} written as ${iso} (ISO 8601)`, at, "changed");
      f.default = iso;
      return;
    }
    f.default = value;
  } else if ("expression" in d) {
    if (/^nextval\(/i.test(d.expression)) f.generated = "increment";
    else {
      const g = generatedDefault(d.expression);
      if (g) f.generated = g === "now" && onUpdate ? "now_on_update" : g;
      else state.note(`${t.name}.${f.name}`, `default expression ${d.expression} is not a constant; left out`, at);
    }
  }
}

/** A date or timestamp as SQL writes it (`1970-01-01 00:00:00 +00:00`) in ISO 8601, or undefined. */
function isoTime(text: string, type: "date" | "datetime"): string | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/.exec(text.trim());
  if (!m) return undefined;
  const [, day, time, zone] = m;
  if (type === "date") return time === undefined ? day : undefined;
  const z =
    zone === undefined ? "Z" : zone === "Z" ? "Z" : /^[+-]\d{2}$/.test(zone) ? `${zone}:00` : zone.replace(/^([+-]\d{2})(\d{2})$/, "$1:$2");
  return `${day}T${time ?? "00:00:00"}${z}`;
}
