import type { EntityIR, FieldIR, FieldType, SqlType } from "../../compiler/index.js";
import { FIELD_TYPES } from "../../compiler/index.js";

/**
 * The PostgreSQL vocabulary shared by the `postgres` and `migrations` generators (and available to
 * the FastAPI generator): where the files go, how a field type maps to a column type, how values
 * and identifiers are quoted, and how constraints and indexes are named. Keeping it in one module
 * is what lets schema.sql, the migrations and the app's queries agree on every name.
 */

/** Output-relative path of the full, idempotent schema (the `postgres` target). */
export const SCHEMA_SQL_PATH = "backend/db/schema.sql";
/** Output-relative folder of the numbered migrations (the `migrations` target). */
export const MIGRATIONS_DIR = "backend/db/migrations/";
/** The snapshot of the schema the last migration produced; not a `.sql` file, so the runner skips it. */
export const SNAPSHOT_PATH = `${MIGRATIONS_DIR}snapshot.json`;

/** Table names of the system tables every generated database has. */
export const EVENTS_TABLE = "events";
export const AUTH_USERS_TABLE = "auth_users";
/** Every run of an agent (only in domains with Agent contracts); see app/agents.py. */
export const AGENT_RUNS_TABLE = "agent_runs";
/** Numbers the outbox rows: the dispatcher hands each record's events over in this order. */
export const EVENTS_SEQUENCE = "events_seq_seq";
/** The first responses of idempotent creates (the app's Idempotency-Key support). */
export const IDEMPOTENCY_KEYS_TABLE = "idempotency_keys";
/**
 * Exact row counts of the entity tables, kept by triggers: a list's unfiltered total reads the
 * table's counters instead of counting its rows (convertor.ts has the functions).
 */
export const ROW_COUNTS_TABLE = "row_counts";
/** The sequence whose value changes with every write to a counted entity table (convertor.ts). */
export const ROW_VERSIONS_SEQUENCE = "row_versions";
/** Counters per table: each connection adds to the one of its process id modulo this. */
export const ROW_COUNT_SHARDS = 64;
/** The column a soft-deleting entity marks its deleted rows with; they do not count. */
export const SOFT_DELETE_COLUMN = "is_deleted";
/** Created by the app's migration runner, never by these generators. */
export const SCHEMA_MIGRATIONS_TABLE = "schema_migrations";

export type { SqlType } from "../../compiler/index.js";

/** Column type of a contract field type. */
export function sqlType(type: FieldType): SqlType {
  return FIELD_TYPES[type].sql;
}

/**
 * Conversions that keep every value as it was: a migration that changes a column along one of these
 * is safe; any other type change is a narrowing and flagged as destructive. (BIGINT to DOUBLE
 * PRECISION loses precision only beyond 2^53, which the contracts' `integer` does not promise.)
 */
const WIDENINGS: Record<SqlType, readonly SqlType[]> = {
  UUID: ["TEXT"],
  TEXT: [],
  BIGINT: ["DOUBLE PRECISION", "TEXT"],
  "DOUBLE PRECISION": ["TEXT"],
  BOOLEAN: ["TEXT"],
  DATE: ["TIMESTAMPTZ", "TEXT"],
  TIMESTAMPTZ: ["TEXT"],
  JSONB: ["TEXT"],
  INTERVAL: ["TEXT"],
};

export function isWidening(from: SqlType, to: SqlType): boolean {
  return from === to || WIDENINGS[from].includes(to);
}

/** The state column of an entity governed by a workflow (added by the compiler, origin `system`). */
export function isStateField(entity: EntityIR, field: FieldIR): boolean {
  return entity.stateMachine !== null && field.name === "state" && field.origin === "system";
}

/** The sequence behind a `sequence(...)` computed field, or null. */
export function sequenceOf(field: FieldIR): string | null {
  return field.computed?.kind === "sequence" ? field.computed.sequenceName : null;
}

/** NOT NULL columns: the fields the compiler decided are never null (`FieldIR.nullable`). */
export function columnNotNull(field: FieldIR): boolean {
  return !field.nullable;
}

/**
 * The SQL DEFAULT of a column, or null. Contract defaults become literals; computed timestamps and
 * uuids get database defaults too, so rows inserted outside the app (and columns added to tables
 * that already hold rows) get a sensible value. The app still sets these values itself.
 */
export function columnDefault(field: FieldIR): string | null {
  if (field.hasDefault && field.default !== null && field.default !== undefined) {
    return sqlLiteral(field.default, sqlType(field.type));
  }
  switch (field.computed?.kind) {
    case "now":
    case "now_on_update":
      return "now()";
    case "uuid":
      return "gen_random_uuid()";
    default:
      return null;
  }
}

/** A value as an SQL literal of the given column type. */
export function sqlLiteral(value: unknown, type: SqlType): string {
  if (type === "JSONB") return `${quoteLiteral(JSON.stringify(value))}::jsonb`;
  if (typeof value === "boolean") return type === "BOOLEAN" ? String(value) : quoteLiteral(String(value));
  if (typeof value === "number") {
    return type === "BIGINT" || type === "DOUBLE PRECISION" ? numberLiteral(value) : quoteLiteral(String(value));
  }
  if (typeof value === "string") return quoteLiteral(value);
  return quoteLiteral(JSON.stringify(value));
}

function numberLiteral(n: number): string {
  if (!Number.isFinite(n)) return `'${n > 0 ? "Infinity" : n < 0 ? "-Infinity" : "NaN"}'`;
  return String(n);
}

/** `'it''s'`: standard_conforming_strings is on in every supported PostgreSQL, so `\` is literal. */
export function quoteLiteral(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** Identifiers are always quoted so reserved words (`user`, `order`) are safe as names. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

// The compiler owns the limit: it refuses longer table and column names and shortens the
// sequence names it derives; the names derived here (indexes, constraints) are shortened alike.
import { limitIdentifier } from "../../compiler/naming.js";

export { limitIdentifier, MAX_IDENTIFIER_BYTES } from "../../compiler/naming.js";

/** `ix_<table>_<column>` */
export function indexName(table: string, column: string): string {
  return limitIdentifier(`ix_${table}_${column}`);
}

/** `uq_<table>_<column>` */
export function uniqueIndexName(table: string, column: string): string {
  return limitIdentifier(`uq_${table}_${column}`);
}

/** `ck_<table>_<column>_<what>`, `what` being enum, min, max, min_length, max_length or pattern. */
export function checkName(table: string, column: string, what: string): string {
  return limitIdentifier(`ck_${table}_${column}_${what}`);
}

/** `fk_<table>_<column>` */
export function foreignKeyName(table: string, column: string): string {
  return limitIdentifier(`fk_${table}_${column}`);
}
