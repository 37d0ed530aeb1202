import { OPEN_STATUSES, PRIORITIES, TICKET_SOURCES, TICKET_STATUSES, type Ticket } from "../types.js";

/**
 * The ticket table, once for both stores: each column's name, its type in SQLite and in
 * PostgreSQL, its constraints and default, and whether it is a field of `Ticket` (JSON kept as
 * text). store-sqlite.ts and store-postgres.ts derive their CREATE TABLE, the columns an older
 * table lacks, and the row-to-ticket mapping from this list, so a new column is one line here.
 */
export type Dialect = "sqlite" | "postgres";

export interface TicketColumn {
  readonly name: string;
  /** The type, or the whole definition of a key whose syntax differs, per dialect; null: not in this dialect. */
  readonly type: { readonly sqlite: string | null; readonly postgres: string | null };
  /** NOT NULL, CHECK, DEFAULT: the same SQL in both dialects. */
  readonly constraints?: string;
  /** A field of `Ticket`: copied by `toTicket`, parsed from JSON when `json`. */
  readonly ticket?: boolean;
  readonly json?: boolean;
}

const sqlList = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(", ");
/** The open statuses as an SQL list, for `status IN (...)`. */
export const OPEN_SQL = sqlList(OPEN_STATUSES);
const text = { sqlite: "TEXT", postgres: "TEXT" };
const integer = { sqlite: "INTEGER", postgres: "INTEGER" };
/** Milliseconds since the epoch overflow PostgreSQL's 32-bit INTEGER; SQLite's INTEGER is 64-bit. */
const bigint = { sqlite: "INTEGER", postgres: "BIGINT" };

export const TICKET_COLUMNS = [
  // `seq` breaks ties between tickets created in the same millisecond, so the queue stays first-in-first-out.
  { name: "seq", type: { sqlite: "INTEGER PRIMARY KEY AUTOINCREMENT", postgres: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY" } },
  { name: "id", type: text, constraints: "NOT NULL UNIQUE", ticket: true },
  { name: "source", type: text, constraints: `NOT NULL CHECK (source IN (${sqlList(TICKET_SOURCES)}))`, ticket: true },
  { name: "contract_fqn", type: text, ticket: true },
  { name: "error_type", type: text, constraints: "NOT NULL DEFAULT ''", ticket: true },
  { name: "raw_error", type: text, constraints: "NOT NULL", ticket: true },
  { name: "context", type: text, constraints: "NOT NULL DEFAULT '{}'", ticket: true, json: true },
  {
    name: "status",
    type: text,
    constraints: `NOT NULL DEFAULT 'queued' CHECK (status IN (${sqlList(TICKET_STATUSES)}))`,
    ticket: true,
  },
  { name: "tier", type: integer, constraints: "NOT NULL DEFAULT 0 CHECK (tier BETWEEN 0 AND 3)", ticket: true },
  { name: "priority", type: text, constraints: `NOT NULL DEFAULT 'medium' CHECK (priority IN (${sqlList(PRIORITIES)}))`, ticket: true },
  { name: "priority_order", type: integer, constraints: "NOT NULL DEFAULT 2", ticket: true },
  {
    name: "fixable_by",
    type: text,
    constraints: "NOT NULL DEFAULT 'contract' CHECK (fixable_by IN ('contract', 'generator', 'data'))",
    ticket: true,
  },
  { name: "proposal", type: text, ticket: true, json: true },
  { name: "created_at", type: text, constraints: "NOT NULL", ticket: true },
  { name: "created_ms", type: bigint, constraints: "NOT NULL" },
  { name: "updated_at", type: text, constraints: "NOT NULL", ticket: true },
  { name: "resolved_at", type: text, ticket: true },
  { name: "resolution_note", type: text, constraints: "NOT NULL DEFAULT ''", ticket: true },
  { name: "fingerprint", type: text, constraints: "NOT NULL", ticket: true },
  { name: "occurrences", type: integer, constraints: "NOT NULL DEFAULT 1", ticket: true },
  { name: "last_seen_at", type: text, constraints: "NOT NULL", ticket: true },
  { name: "claimed_by", type: text },
  { name: "diff_id", type: text, ticket: true },
  /** How many times the ticket was claimed (its processing log); added by the SQLite store's version 2. */
  { name: "claims", type: integer, constraints: "NOT NULL DEFAULT 0" },
  // The lease of a claim, PostgreSQL only: the store instance holding it, renewed by its heartbeat.
  { name: "lease_token", type: { sqlite: null, postgres: "TEXT" } },
  { name: "lease_until", type: { sqlite: null, postgres: "TIMESTAMPTZ" } },
  // The failed request's ids (X-Request-ID and the W3C trace id), so a ticket links to its logs and trace.
  { name: "request_id", type: text, ticket: true },
  { name: "trace_id", type: text, ticket: true },
  // What the last attempt ran with: hashes of the model and its settings, and of the contracts
  // (pipeline/core.ts `attemptKeys`). A failed ticket is asked again only when one of them changed.
  { name: "attempt_model", type: text },
  { name: "attempt_contracts", type: text },
  /** When the ticket last came back after its fix was applied (Sentry's regression); null: never. */
  { name: "regressed_at", type: text, ticket: true },
  // The ingest that last reopened the ticket (the id it would have inserted), so that one caller,
  // and only that one, learns it reopened it.
  { name: "reopened_by", type: text },
] as const satisfies readonly TicketColumn[];

type TicketFieldColumn = Extract<(typeof TICKET_COLUMNS)[number], { ticket: true }>["name"];
/** A compile error when `Ticket` and the columns marked `ticket` drift apart. */
const sameFields: [TicketFieldColumn] extends [keyof Ticket] ? ([keyof Ticket] extends [TicketFieldColumn] ? true : never) : never = true;
void sameFields;

/** The columns of one dialect. */
export function ticketColumns(dialect: Dialect): readonly TicketColumn[] {
  return TICKET_COLUMNS.filter((c: TicketColumn) => c.type[dialect] !== null);
}

/** One column's definition, as CREATE TABLE and ALTER TABLE ... ADD COLUMN write it. */
export function columnSql(c: TicketColumn, dialect: Dialect): string {
  return [c.name.padEnd(15), c.type[dialect], c.constraints].filter(Boolean).join(" ");
}

/**
 * CREATE TABLE and the index of the queue. The unique index on the fingerprint comes separately
 * (`fingerprintIndexSql`): a table of an older Charter may hold several tickets of one error,
 * which the store merges first (`mergePlan`).
 */
export function ticketTableSql(dialect: Dialect, table: string): string {
  const columns = ticketColumns(dialect).map((c) => `  ${columnSql(c, dialect)}`);
  return `CREATE TABLE IF NOT EXISTS ${table} (
${columns.join(",\n")}
);
CREATE INDEX IF NOT EXISTS tickets_queue ON ${table} (status, priority_order, created_ms, seq);
`;
}

/**
 * "One ticket per error, whatever its state" as a database invariant: a unique index on the
 * fingerprint, which holds with several processes ingesting at once (the ingest is an upsert on
 * it). Older tables had it on open tickets only, plus a plain index; both go.
 */
export function fingerprintIndexSql(table: string): string[] {
  const schema = table.includes(".") ? `${table.split(".")[0]}.` : "";
  return [
    `DROP INDEX IF EXISTS ${schema}tickets_open_fingerprint`,
    `DROP INDEX IF EXISTS ${schema}tickets_fingerprint`,
    `CREATE UNIQUE INDEX IF NOT EXISTS tickets_fingerprint_unique ON ${table} (fingerprint)`,
  ];
}

/** Fingerprints held by more than one ticket (only in a table written before the unique index). */
export function duplicateFingerprintsSql(table: string): string {
  return `SELECT fingerprint FROM ${table} GROUP BY fingerprint HAVING COUNT(*) > 1`;
}

/** The rows of one fingerprint, as the merge reads them. */
export interface MergeRow {
  /** PostgreSQL's BIGINT columns come back as strings. */
  seq: number | string;
  id: string;
  status: string;
  occurrences: number;
  created_at: string;
  created_ms: number | string;
  last_seen_at: string;
  resolution_note: string;
}

/**
 * How the tickets of one error become one: the open one survives (there is at most one), else the
 * newest; it takes every occurrence, the first one's creation time and the latest last-seen time,
 * and its note names the tickets merged into it. The others are deleted (their diff records
 * under .forge/diffs keep what they applied).
 */
export function mergePlan(rows: readonly MergeRow[]): {
  keep: string;
  occurrences: number;
  created_at: string;
  created_ms: number;
  last_seen_at: string;
  resolution_note: string;
  drop: string[];
} {
  const bySeq = [...rows].sort((a, b) => Number(a.seq) - Number(b.seq));
  const keep = bySeq.find((r) => (OPEN_STATUSES as readonly string[]).includes(r.status)) ?? (bySeq[bySeq.length - 1] as MergeRow);
  const first = bySeq.reduce((a, b) => (Number(b.created_ms) < Number(a.created_ms) ? b : a));
  const last = bySeq.reduce((a, b) => (Date.parse(b.last_seen_at) > Date.parse(a.last_seen_at) ? b : a));
  const others = bySeq.filter((r) => r !== keep);
  const merged = `merged ${others.length} earlier ticket(s) of this error: ${others.map((r) => `${r.id.slice(0, 8)} (${r.status}, ${r.occurrences})`).join(", ")}`;
  return {
    keep: keep.id,
    occurrences: bySeq.reduce((n, r) => n + Number(r.occurrences), 0),
    created_at: first.created_at,
    created_ms: Number(first.created_ms),
    last_seen_at: last.last_seen_at,
    resolution_note: keep.resolution_note ? `${keep.resolution_note}; ${merged}` : merged,
    drop: others.map((r) => r.id),
  };
}

/**
 * The report ids a store has taken (`NewTicket.report_id`), so a report sent again after a lost
 * answer is not counted twice; kept for `REPORT_KEY_TTL_MS`, far beyond any reporter's retries.
 */
export function reportKeysTableSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  key     TEXT PRIMARY KEY,
  seen_ms BIGINT NOT NULL
);
`;
}

/** How long a report id is remembered: the generated app gives up retrying well before. */
export const REPORT_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** Old report ids are pruned once every this many ingests (a cheap indexed-free scan of a small table). */
export const REPORT_KEY_PRUNE_EVERY = 500;

/** The note of a ticket reopened as a regression, and of one asked again after a failure. */
export const REGRESSION_NOTE = "regression: the error came back after its fix was applied";
export const RETRY_NOTE = "retried";

/**
 * The ingest of one report as an upsert on the fingerprint (`t` is the stored ticket, `excluded`
 * the one the report would have inserted), the same SQL in both dialects. A repeat adds its
 * occurrences to the ticket whatever its state, and besides:
 * - a `failed` ticket goes back to the queue when the model, its settings or the contracts differ
 *   from those of its failed attempt (`attempt_*`): asking again could now give another answer;
 * - an `applied` ticket, or one closed as obsolete because the error had gone (fixed by hand), is
 *   reopened as a regression: queued again, `regressed_at` set, the note saying so.
 * Either reopening drops the old proposal (it is proposed afresh) and records the ingest that did it.
 */
export function upsertSetSql(): string {
  const changed =
    "(t.attempt_model IS DISTINCT FROM excluded.attempt_model OR t.attempt_contracts IS DISTINCT FROM excluded.attempt_contracts)";
  const retry = `(t.status = 'failed' AND ${changed})`;
  const obsolete = "(t.status = 'rejected' AND t.resolution_note LIKE 'obsolete:%')";
  const regress = `(t.status = 'applied' OR ${obsolete})`;
  const reopen = `(${retry} OR ${regress})`;
  const keep = (column: string, value: string): string => `${column} = CASE WHEN ${reopen} THEN ${value} ELSE t.${column} END`;
  return `occurrences = t.occurrences + excluded.occurrences, last_seen_at = excluded.last_seen_at, updated_at = excluded.updated_at,
    request_id = COALESCE(excluded.request_id, t.request_id), trace_id = COALESCE(excluded.trace_id, t.trace_id),
    ${keep("status", "'queued'")}, ${keep("resolved_at", "NULL")}, ${keep("proposal", "NULL")}, ${keep("claimed_by", "NULL")},
    ${keep("attempt_model", "excluded.attempt_model")}, ${keep("attempt_contracts", "excluded.attempt_contracts")},
    ${keep("reopened_by", "excluded.id")},
    regressed_at = CASE WHEN ${regress} THEN excluded.last_seen_at ELSE t.regressed_at END,
    resolution_note = CASE
      WHEN ${retry} AND t.attempt_model IS DISTINCT FROM excluded.attempt_model
        THEN '${RETRY_NOTE}: the model or its settings changed since the failed attempt (' || t.resolution_note || ')'
      WHEN ${retry} THEN '${RETRY_NOTE}: the contracts changed since the failed attempt (' || t.resolution_note || ')'
      WHEN t.status = 'applied'
        THEN '${REGRESSION_NOTE}' || CASE WHEN t.diff_id IS NULL THEN '' ELSE ' (diff ' || t.diff_id || ')' END
      WHEN ${obsolete} THEN '${REGRESSION_NOTE} outside the Healer'
      ELSE t.resolution_note END`;
}

/**
 * ALTER TABLE statements for the columns a table written by an older Charter lacks (CREATE TABLE
 * IF NOT EXISTS leaves such a table as it was). Such a column has a default or allows NULL.
 */
export function missingColumnsSql(dialect: Dialect, table: string, present: ReadonlySet<string>): string[] {
  return ticketColumns(dialect)
    .filter((c) => !present.has(c.name))
    .map((c) => `ALTER TABLE ${table} ADD COLUMN ${columnSql(c, dialect).replace(/\s+/, " ")}`);
}

/** A stored row as the Ticket the pipeline works with: the `ticket` columns, JSON parsed. */
export function toTicket(row: Readonly<Record<string, unknown>>): Ticket {
  const out: Record<string, unknown> = {};
  for (const c of TICKET_COLUMNS as readonly TicketColumn[]) {
    if (!c.ticket) continue;
    const value = row[c.name];
    out[c.name] = c.json && typeof value === "string" ? JSON.parse(value) : value;
  }
  return out as unknown as Ticket;
}
