import { hostname } from "node:os";
import { HealerError } from "../errors.js";
import type { FixableBy, Priority, Proposal, Ticket, TicketContext, TicketSource, TicketStatus, Tier } from "../types.js";

/**
 * The ticket store: one interface, two backends. SQLite (`.forge/healer/healer.db`) is the default
 * and belongs to one Healer process; PostgreSQL (`HEALER_DATABASE_URL`) is shared by several Healer
 * replicas, which then work one queue. Both keep the same invariants: one ticket per fingerprint,
 * whatever its state (a unique index; the ingest is an upsert on it), a claimed ticket belongs to exactly one claimer, and every state change is a guarded
 * UPDATE that returns null when someone else moved the ticket first.
 */
export interface TicketStore {
  readonly backend: "sqlite" | "postgres";
  /** Where the tickets live, safe to print: a file path, or the database URL without its password. */
  readonly location: string;
  /**
   * Whether several processes may serve this store at once. SQLite's is owned by one service (the
   * `service` lock); PostgreSQL's queue is meant to be shared by replicas.
   */
  readonly shared: boolean;
  /** Opens the store and creates or migrates its schema; every other method waits for it too. */
  open(): Promise<void>;
  close(): Promise<void>;
  /**
   * Adds a report: when a ticket has the same fingerprint, in any state, its occurrence count and
   * last-seen time go up (and a failed or fixed one may be reopened, see ticket-table.ts
   * `upsertSetSql`); otherwise a new `queued` ticket is created. Two processes reporting the same
   * error at once still end with one ticket.
   */
  ingest(t: NewTicket): Promise<IngestResult>;
  /** Many reports in one transaction (a scan's findings, a group commit): all become tickets, or none. */
  ingestMany(list: readonly NewTicket[]): Promise<IngestResult[]>;
  /** Claims the next queued ticket (priority, then oldest) by moving it to `analyzing`; null when none is left. */
  claimNext(): Promise<Ticket | null>;
  /** Claims one given ticket when it is still queued. */
  claim(id: string): Promise<Ticket | null>;
  /** Claims an approved ticket nobody is applying (left by an interrupted run). */
  claimApproved(): Promise<Ticket | null>;
  /**
   * Moves a ticket from `from` to `to` in one guarded UPDATE; null when the ticket was not in `from`
   * any more. Terminal states get `resolved_at` and lose the claim.
   */
  transition(id: string, from: TicketStatus | readonly TicketStatus[], to: TicketStatus, update?: TicketUpdate): Promise<Ticket | null>;
  /** Updates fields without a status change (a proposal recorded before it is applied, say). */
  update(id: string, status: TicketStatus, update: TicketUpdate): Promise<Ticket | null>;
  /**
   * Hands back work of processes that died mid-way: `analyzing` tickets go back to the queue,
   * `approved` ones lose their claim. A claim is stale when its process no longer exists on this
   * host (`isAlive`) or, on PostgreSQL, when its lease ran out (a replica on another machine died).
   */
  recoverStale(isAlive?: (owner: string) => boolean): Promise<{ requeued: number; released: number }>;
  get(id: string): Promise<Ticket | null>;
  /**
   * Finds a ticket by full id or by a unique prefix of at least four characters. Short,
   * ambiguous and unknown ids are `HealerError`s with a message that says what to do.
   */
  resolve(idOrPrefix: string): Promise<Ticket>;
  /** Tickets in queue order (priority, then oldest first), optionally filtered. */
  list(filter?: TicketFilter, limit?: number): Promise<Ticket[]>;
  countByStatus(): Promise<Record<TicketStatus, number>>;
  /** The figures of the monitor view (metrics.ts turns them into `HealerStatus`). */
  outcomes(limits: { recurring: number; recent: number }): Promise<Outcomes>;
  /**
   * A named lease held in the database (the apply step takes one, so two processes never rewrite
   * contracts of one project at the same time). Leases of dead holders are taken over.
   */
  tryLock(name: string, isAlive?: (owner: string) => boolean): Promise<boolean>;
  unlock(name: string): Promise<void>;
}

export interface IngestResult {
  ticket: Ticket;
  created: boolean;
  /**
   * Set when this report put a closed ticket back in the queue: `retry` for a failed one whose
   * model, settings or contracts changed, `regression` for a fixed one whose error came back.
   */
  reopened?: "retry" | "regression";
  /** Set when the store had already taken a report with this one's `report_id`: nothing was counted. */
  repeated?: boolean;
}

/** Raw figures for the monitor: end states per tier, recurring errors, recent resolutions. */
export interface Outcomes {
  rates: { tier: number; ok: number; n: number }[];
  recurring: { contract_fqn: string; error_type: string; count: number }[];
  recent: { id: string; fqn: string; status: TicketStatus; tier: number }[];
}

/** A new ticket, already classified (the queue orders by priority, so it is known up front). */
export interface NewTicket {
  source: TicketSource;
  contract_fqn: string | null;
  error_type: string;
  raw_error: string;
  context: TicketContext;
  tier: Tier;
  priority: Priority;
  fixable_by: FixableBy;
  fingerprint: string;
  /** The failed request's ids (a runtime report's), see `takeRequestIds`. */
  request_id?: string | null;
  trace_id?: string | null;
  /** The reporter's id of the report (`ErrorReport.report_id`): a report sent again is not counted again. */
  report_id?: string | null;
  resolution_note?: string;
  /**
   * Hashes of the model with its settings, and of the contracts, as the Healer sees them now
   * (pipeline/core.ts `attemptKeys`). A repeat of a failed ticket reopens it only when they differ
   * from those of its failed attempt; a new ticket starts with them.
   */
  attempt_model?: string | null;
  attempt_contracts?: string | null;
}

export interface TicketFilter {
  status?: TicketStatus | undefined;
  priority?: Priority | undefined;
  contract_fqn?: string | undefined;
}

/** Fields a state change may set besides the status. */
export interface TicketUpdate {
  proposal?: Proposal | null;
  resolution_note?: string;
  diff_id?: string | null;
  tier?: Tier;
  priority?: Priority;
  error_type?: string;
  fixable_by?: FixableBy;
  claimed_by?: string | null;
  /** What an attempt runs with (see `NewTicket.attempt_model`), recorded when it starts. */
  attempt_model?: string | null;
  attempt_contracts?: string | null;
}

/** Smallest ticket-id prefix the lookup accepts (shorter prefixes match too many tickets). */
export const MIN_PREFIX_LENGTH = 4;

/** Identifies this process as the holder of a claim; `host:pid`, so a dead claimer can be detected. */
export const PROCESS_OWNER = `${hostname()}:${process.pid}`;

/** A database URL with its password replaced, for messages and banners. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ":***@");
  }
}

/** Validates an id or prefix, and turns the candidates a backend found into one ticket or a clear error. */
export function checkIdKey(idOrPrefix: string): string {
  const key = idOrPrefix.trim().toLowerCase();
  if (!/^[0-9a-f-]+$/.test(key))
    throw new HealerError("invalid_id", `invalid ticket id ${JSON.stringify(idOrPrefix)}: expected a UUID or a prefix of one`);
  return key;
}

export function pickByPrefix(idOrPrefix: string, key: string, rows: readonly Ticket[]): Ticket {
  if (key.length < MIN_PREFIX_LENGTH) {
    throw new HealerError(
      "invalid_id",
      `ticket id prefix ${JSON.stringify(idOrPrefix)} is too short: give at least ${MIN_PREFIX_LENGTH} characters`,
    );
  }
  if (rows.length === 0) throw new HealerError("not_found", `no ticket with id or prefix ${JSON.stringify(idOrPrefix)}`);
  if (rows.length > 1) {
    const shown = rows.slice(0, 5).map((r) => r.id.slice(0, 12));
    throw new HealerError(
      "ambiguous",
      `ticket id prefix ${JSON.stringify(idOrPrefix)} is ambiguous: it matches ${rows.length > 5 ? "more than 5" : rows.length} tickets (${shown.join(", ")}); give more characters`,
    );
  }
  return rows[0] as Ticket;
}

/** Whether the process named by a `host:pid` owner still runs; owners on other hosts are assumed alive. */
export function ownerAlive(owner: string): boolean {
  const i = owner.lastIndexOf(":");
  const host = owner.slice(0, i);
  const pid = Number(owner.slice(i + 1));
  if (host !== hostname() || !Number.isInteger(pid)) return true;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A ticket row as the drivers return it (JSON still as text); ticket-table.ts's `toTicket` reads it. */
export type TicketRow = Omit<Ticket, "context" | "proposal"> & {
  context: string;
  proposal: string | null;
  claimed_by: string | null;
  reopened_by?: string | null;
};

/** Whether the upserted row is the report's own new ticket, or a closed one the report reopened. */
export function ingestOutcome(row: TicketRow, insertedId: string, ticket: Ticket): IngestResult {
  if (row.id === insertedId) return { ticket, created: true };
  if (row.reopened_by === insertedId)
    return { ticket, created: false, reopened: row.resolution_note.startsWith("regression:") ? "regression" : "retry" };
  return { ticket, created: false };
}

// What an app may send as the ids of the failed request (app/observability.py makes them so).
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$/;
const TRACE_ID = /^[0-9a-f]{32}$/;

/**
 * Takes the failed request's ids out of a report's context: they go to columns of their own, kept
 * verbatim (redaction, which runs over the context, could mistake a run of digits for a value).
 */
export function takeRequestIds(context: TicketContext | undefined): {
  context: TicketContext;
  ids: { request_id: string | null; trace_id: string | null };
} {
  const { request_id, trace_id, ...rest } = context ?? {};
  return {
    context: rest,
    ids: {
      request_id: typeof request_id === "string" && REQUEST_ID.test(request_id) ? request_id : null,
      trace_id: typeof trace_id === "string" && TRACE_ID.test(trace_id) && !/^0+$/.test(trace_id) ? trace_id : null,
    },
  };
}
