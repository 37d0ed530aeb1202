import type { DomainIR, EntityIR, FieldIR, OnDeleteRule } from "../../compiler/index.js";
import { compareText } from "../../shared/text.js";
import {
  AGENT_RUNS_TABLE,
  AUTH_USERS_TABLE,
  checkName,
  columnDefault,
  columnNotNull,
  EVENTS_SEQUENCE,
  EVENTS_TABLE,
  foreignKeyName,
  IDEMPOTENCY_KEYS_TABLE,
  indexName,
  isStateField,
  limitIdentifier,
  ROW_COUNTS_TABLE,
  type SqlType,
  sequenceOf,
  sqlType,
  uniqueIndexName,
} from "./types.js";

/**
 * The database the contracts describe, as plain data: what schema.sql creates, and what the
 * migrations snapshot stores (drizzle-kit's snapshot idea). Every list is in a fixed order so the
 * same IR always gives the same JSON and the same SQL.
 *
 * Constraints are kept structured (kind and value, not SQL text) so that the diff can recognise a
 * constraint whose only change is its name, after a table or column rename, and rename it instead
 * of dropping and re-adding it.
 */
export interface SchemaModel {
  /** Entity tables in IR order (sorted by FQN), then the system tables. */
  tables: TableModel[];
  /** Sequence names, sorted. */
  sequences: string[];
}

export interface TableModel {
  /**
   * Stable identity across generations: the entity FQN, or `system/<name>` for system tables. A
   * table whose key stays while its name changes (`spec.table` edited) is renamed, not recreated.
   */
  key: string;
  name: string;
  /** In field order; the primary key first. */
  columns: ColumnModel[];
  checks: CheckModel[];
  foreignKeys: ForeignKeyModel[];
  /** Sorted by name. */
  indexes: IndexModel[];
  /** An entity table whose rows triggers count into row_counts (`list_total: counter`). */
  rowCounter?: true;
}

export interface ColumnModel {
  name: string;
  type: SqlType;
  primaryKey: boolean;
  notNull: boolean;
  /** SQL expression, or null for no default. */
  default: string | null;
}

export type CheckKind = "enum" | "min" | "max" | "min_length" | "max_length" | "pattern";

export interface CheckModel {
  name: string;
  column: string;
  kind: CheckKind;
  /** enum: the allowed values; min/max/min_length/max_length: a number; pattern: the regex. */
  value: (string | number | boolean)[] | number | string;
}

export type OnDelete = "RESTRICT" | "CASCADE" | "SET NULL";

export interface ForeignKeyModel {
  name: string;
  column: string;
  /** Key of the referenced table (its identity survives a rename of that table). */
  refKey: string;
  refTable: string;
  onDelete: OnDelete;
}

export interface IndexModel {
  name: string;
  columns: string[];
  unique: boolean;
}

export const SYSTEM_EVENTS_KEY = "system/events";
export const SYSTEM_AUTH_USERS_KEY = "system/auth_users";
export const SYSTEM_AGENT_RUNS_KEY = "system/agent_runs";
export const SYSTEM_IDEMPOTENCY_KEYS_KEY = "system/idempotency_keys";
export const SYSTEM_ROW_COUNTS_KEY = "system/row_counts";

/** Tables of entities, as opposed to the system tables (events, users, counters...). */
export function isEntityTable(table: TableModel): boolean {
  return !table.key.startsWith("system/");
}

/** Builds the schema model of a domain. Pure and deterministic. */
export function buildSchemaModel(ir: DomainIR): SchemaModel {
  const tableOf = new Map(ir.entities.map((e) => [e.fqn, e.table]));
  const tables = ir.entities.map((e) => entityTable(e, tableOf));
  tables.push(eventsTable());
  if (ir.auth !== null) tables.push(authUsersTable());
  tables.push(idempotencyKeysTable());
  tables.push(rowCountsTable());
  if (ir.agents.length > 0) tables.push(agentRunsTable());
  const sequences = new Set<string>([EVENTS_SEQUENCE]);
  for (const e of ir.entities) {
    for (const f of e.fields) {
      const s = sequenceOf(f);
      if (s !== null) sequences.add(s);
    }
  }
  return { tables, sequences: [...sequences].sort() };
}

const ON_DELETE_SQL: Record<OnDeleteRule, OnDelete> = { restrict: "RESTRICT", cascade: "CASCADE", set_null: "SET NULL" };

function entityTable(entity: EntityIR, tableOf: ReadonlyMap<string, string>): TableModel {
  const t = entity.table;
  const columns: ColumnModel[] = [];
  const checks: CheckModel[] = [];
  const foreignKeys: ForeignKeyModel[] = [];
  const indexes: IndexModel[] = [];
  for (const f of entity.fields) {
    const type = sqlType(f.type);
    columns.push({
      name: f.name,
      type,
      primaryKey: f.primaryKey,
      notNull: columnNotNull(f),
      default: columnDefault(f),
    });
    checks.push(...fieldChecks(t, f, type));
    if (f.references !== null) {
      const refTable = tableOf.get(f.references.entity) ?? f.references.entityName;
      foreignKeys.push({
        name: foreignKeyName(t, f.name),
        column: f.name,
        refKey: f.references.entity,
        refTable,
        onDelete: ON_DELETE_SQL[f.references.onDelete],
      });
      indexes.push({ name: indexName(t, f.name), columns: [f.name], unique: false });
    }
    if (sequenceOf(f) !== null) indexes.push({ name: uniqueIndexName(t, f.name), columns: [f.name], unique: true });
    // (created_at, id) is the default order of every list endpoint and the keyset its cursors
    // continue from; state is the kanban's filter, so its index holds that order too (a column of
    // a state's cards is read in order, without a sort). Never the state alone: deduplicated to a
    // few pages, such an index is what PostgreSQL picks to count the table, and an index-only scan
    // of it counts 10,000 rows in 510 us where the table's own scan takes 310.
    if (f.name === "created_at") indexes.push({ name: indexName(t, f.name), columns: ["created_at", "id"], unique: false });
    if (isStateField(entity, f)) {
      const order = entity.fields.some((x) => x.name === "created_at") ? ["created_at", "id"] : ["id"];
      indexes.push({ name: indexName(t, `${f.name}_${order[0]}`), columns: [f.name, ...order], unique: false });
    }
  }
  const table: TableModel = { key: entity.fqn, name: t, columns, checks, foreignKeys, indexes: dedupeIndexes(indexes) };
  if (entity.listTotal === "counter") table.rowCounter = true;
  return table;
}

/**
 * CHECK constraints of one field. Only combinations with a clear SQL meaning are enforced here
 * (the app validates everything anyway): enums on scalar columns, min/max on numbers, lengths and
 * patterns on text, lengths on arrays.
 */
function fieldChecks(table: string, f: FieldIR, type: SqlType): CheckModel[] {
  const out: CheckModel[] = [];
  const add = (kind: CheckKind, value: CheckModel["value"]): void => {
    out.push({ name: checkName(table, f.name, kind), column: f.name, kind, value });
  };
  const numeric = type === "BIGINT" || type === "DOUBLE PRECISION";
  const text = type === "TEXT";
  if (f.enum !== null && f.enum.length > 0 && type !== "JSONB") add("enum", [...f.enum]);
  const c = f.constraints;
  if (numeric && c.min !== undefined) add("min", c.min);
  if (numeric && c.max !== undefined) add("max", c.max);
  if ((text || f.type === "array") && c.minLength !== undefined) add("min_length", c.minLength);
  if ((text || f.type === "array") && c.maxLength !== undefined) add("max_length", c.maxLength);
  if (text && c.pattern !== undefined) add("pattern", c.pattern);
  return out;
}

function dedupeIndexes(indexes: IndexModel[]): IndexModel[] {
  const byName = new Map<string, IndexModel>();
  for (const ix of indexes) if (!byName.has(ix.name)) byName.set(ix.name, ix);
  return [...byName.values()].sort((a, b) => compareText(a.name, b.name));
}

/**
 * The outbox every emitted domain event is written to, in the same transaction as the change. The
 * columns after `occurred_at` belong to the dispatcher (app/dispatcher.py) and all have defaults, so
 * the writes that insert events name only the first six: `seq` orders them, a claim sets
 * `claimed_by` and pushes `available_at` to the end of its lease (a killed replica's events come
 * back when it runs out), a failure counts an attempt and backs off, too many park the event.
 */
function eventsTable(): TableModel {
  const t = EVENTS_TABLE;
  const column = (name: string, type: ColumnModel["type"], notNull: boolean, def: string | null): ColumnModel => ({
    name,
    type,
    primaryKey: false,
    notNull,
    default: def,
  });
  return {
    key: SYSTEM_EVENTS_KEY,
    name: t,
    columns: [
      { name: "id", type: "UUID", primaryKey: true, notNull: true, default: null },
      column("name", "TEXT", true, null),
      column("entity", "TEXT", true, null),
      column("record_id", "UUID", false, null),
      column("data", "JSONB", true, "'{}'::jsonb"),
      column("occurred_at", "TIMESTAMPTZ", true, "now()"),
      column("seq", "BIGINT", true, `nextval('${EVENTS_SEQUENCE}')`),
      column("attempts", "BIGINT", true, "0"),
      column("available_at", "TIMESTAMPTZ", true, "now()"),
      column("claimed_by", "TEXT", false, null),
      column("dispatched_at", "TIMESTAMPTZ", false, null),
      column("parked_at", "TIMESTAMPTZ", false, null),
      column("last_error", "TEXT", false, null),
    ],
    checks: [],
    foreignKeys: [],
    indexes: [
      // The claim: pending events (dispatched_at IS NULL) in seq order.
      { name: indexName(t, "dispatched_at"), columns: ["dispatched_at", "seq"], unique: false },
      { name: indexName(t, "occurred_at"), columns: ["occurred_at"], unique: false },
      // "No earlier pending event of the same record": the per-record order of the claim.
      { name: indexName(t, "record_id"), columns: ["record_id", "seq"], unique: false },
    ],
  };
}

/**
 * One row per (agent, event): the unique index is what makes a redelivered event (the dispatcher
 * delivers at least once) run its agent once. `decision` is `running` while a run is under way,
 * then `applied`, `fallback` or `skipped`.
 */
function agentRunsTable(): TableModel {
  const t = AGENT_RUNS_TABLE;
  const column = (name: string, type: ColumnModel["type"], notNull: boolean, def: string | null = null): ColumnModel => ({
    name,
    type,
    primaryKey: false,
    notNull,
    default: def,
  });
  return {
    key: SYSTEM_AGENT_RUNS_KEY,
    name: t,
    columns: [
      { name: "id", type: "UUID", primaryKey: true, notNull: true, default: "gen_random_uuid()" },
      column("agent", "TEXT", true),
      column("event_id", "UUID", true),
      column("event", "TEXT", true),
      column("entity", "TEXT", true),
      column("record_id", "UUID", false),
      column("prompt_hash", "TEXT", false),
      column("reply", "TEXT", false),
      column("confidence", "DOUBLE PRECISION", false),
      column("decision", "TEXT", true, "'running'"),
      column("changes", "JSONB", true, "'{}'::jsonb"),
      column("ignored", "JSONB", true, "'[]'::jsonb"),
      column("reason", "TEXT", false),
      column("error", "TEXT", false),
      column("duration_ms", "DOUBLE PRECISION", false),
      column("started_at", "TIMESTAMPTZ", true, "now()"),
      column("finished_at", "TIMESTAMPTZ", false),
    ],
    checks: [],
    foreignKeys: [],
    indexes: [
      { name: limitIdentifier(`uq_${t}_agent_event_id`), columns: ["agent", "event_id"], unique: true },
      { name: indexName(t, "record_id"), columns: ["entity", "record_id", "started_at"], unique: false },
    ],
  };
}

/** Users of the auth Infra contract; the app hashes the bootstrap passwords into it on first start. */
function authUsersTable(): TableModel {
  const t = AUTH_USERS_TABLE;
  return {
    key: SYSTEM_AUTH_USERS_KEY,
    name: t,
    columns: [
      { name: "id", type: "TEXT", primaryKey: true, notNull: true, default: null },
      { name: "email", type: "TEXT", primaryKey: false, notNull: true, default: null },
      { name: "role", type: "TEXT", primaryKey: false, notNull: true, default: null },
      { name: "password_hash", type: "TEXT", primaryKey: false, notNull: false, default: null },
      { name: "created_at", type: "TIMESTAMPTZ", primaryKey: false, notNull: true, default: "now()" },
    ],
    checks: [],
    foreignKeys: [],
    indexes: [{ name: uniqueIndexName(t, "email"), columns: ["email"], unique: true }],
  };
}

/**
 * The first response of each create sent with an Idempotency-Key, kept until `expires_at`. The key
 * names the caller, the entity and the client's key; `status` and `body` stay null only inside the
 * transaction that claims the key and creates the record.
 */
function idempotencyKeysTable(): TableModel {
  const t = IDEMPOTENCY_KEYS_TABLE;
  return {
    key: SYSTEM_IDEMPOTENCY_KEYS_KEY,
    name: t,
    columns: [
      { name: "key", type: "TEXT", primaryKey: true, notNull: true, default: null },
      { name: "fingerprint", type: "TEXT", primaryKey: false, notNull: true, default: null },
      { name: "status", type: "BIGINT", primaryKey: false, notNull: false, default: null },
      { name: "body", type: "TEXT", primaryKey: false, notNull: false, default: null },
      { name: "created_at", type: "TIMESTAMPTZ", primaryKey: false, notNull: true, default: "now()" },
      { name: "expires_at", type: "TIMESTAMPTZ", primaryKey: false, notNull: true, default: null },
    ],
    checks: [],
    foreignKeys: [],
    indexes: [{ name: indexName(t, "expires_at"), columns: ["expires_at"], unique: false }],
  };
}

/**
 * The counters of the rows of entity tables with `list_total: counter`: ROW_COUNT_SHARDS rows per
 * table, whose sum is the number of rows (not soft-deleted ones). The triggers that keep them are
 * installed by the `count_rows` statements; the unique index is what the triggers' updates and the
 * app's sum look rows up by.
 */
function rowCountsTable(): TableModel {
  const t = ROW_COUNTS_TABLE;
  return {
    key: SYSTEM_ROW_COUNTS_KEY,
    name: t,
    columns: [
      { name: "table_name", type: "TEXT", primaryKey: false, notNull: true, default: null },
      { name: "shard", type: "BIGINT", primaryKey: false, notNull: true, default: null },
      { name: "n", type: "BIGINT", primaryKey: false, notNull: true, default: "0" },
    ],
    checks: [],
    foreignKeys: [],
    indexes: [{ name: uniqueIndexName(t, "table_name"), columns: ["table_name", "shard"], unique: true }],
  };
}

/** Columns of a table by name. */
export function columnMap(table: TableModel): Map<string, ColumnModel> {
  return new Map(table.columns.map((c) => [c.name, c]));
}
