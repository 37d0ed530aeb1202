import { OPEN_STATUSES, PRIORITIES, TICKET_SOURCES, TICKET_STATUSES, type Ticket } from "./types.js";

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
 * CREATE TABLE and the indexes of the queue. The partial unique index makes "one open ticket per
 * fingerprint" a database invariant, which holds even with several processes ingesting at once.
 */
export function ticketTableSql(dialect: Dialect, table: string): string {
  const columns = ticketColumns(dialect).map((c) => `  ${columnSql(c, dialect)}`);
  return `CREATE TABLE IF NOT EXISTS ${table} (
${columns.join(",\n")}
);
CREATE INDEX IF NOT EXISTS tickets_queue ON ${table} (status, priority_order, created_ms, seq);
CREATE UNIQUE INDEX IF NOT EXISTS tickets_open_fingerprint ON ${table} (fingerprint) WHERE status IN (${OPEN_SQL});
CREATE INDEX IF NOT EXISTS tickets_fingerprint ON ${table} (fingerprint, seq);
`;
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
