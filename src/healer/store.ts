import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { type Clock, isoWithOffset, systemClock } from "./clock.js";
import { HealerError } from "./errors.js";
import {
  type FixableBy,
  OPEN_STATUSES,
  PRIORITY_ORDER,
  type Priority,
  type Proposal,
  TERMINAL_STATUSES,
  type Ticket,
  type TicketContext,
  type TicketSource,
  type TicketStatus,
  type Tier,
} from "./types.js";

/** Smallest ticket-id prefix the lookup accepts (SPEC.md "Limits"). */
export const MIN_PREFIX_LENGTH = 4;
const SCHEMA_VERSION = 1;

const sqlList = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(", ");
const OPEN_SQL = sqlList(OPEN_STATUSES);

/**
 * The ticket table. `seq` breaks ties between tickets created in the same millisecond, so the
 * queue stays first-in-first-out. The partial unique index makes "one open ticket per
 * fingerprint" a database invariant, which holds even with several processes ingesting at once.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tickets (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,
  source          TEXT NOT NULL CHECK (source IN ('validation', 'compilation', 'runtime', 'manual')),
  contract_fqn    TEXT,
  error_type      TEXT NOT NULL DEFAULT '',
  raw_error       TEXT NOT NULL,
  context         TEXT NOT NULL DEFAULT '{}',
  status          TEXT NOT NULL DEFAULT 'queued'
                  CHECK (status IN ('queued', 'analyzing', 'proposed', 'approved', 'applied', 'failed', 'rejected')),
  tier            INTEGER NOT NULL DEFAULT 0 CHECK (tier BETWEEN 0 AND 3),
  priority        TEXT NOT NULL DEFAULT 'medium' CHECK (priority IN ('critical', 'high', 'medium', 'low')),
  priority_order  INTEGER NOT NULL DEFAULT 2,
  fixable_by      TEXT NOT NULL DEFAULT 'contract' CHECK (fixable_by IN ('contract', 'generator', 'data')),
  proposal        TEXT,
  created_at      TEXT NOT NULL,
  created_ms      INTEGER NOT NULL,
  updated_at      TEXT NOT NULL,
  resolved_at     TEXT,
  resolution_note TEXT NOT NULL DEFAULT '',
  fingerprint     TEXT NOT NULL,
  occurrences     INTEGER NOT NULL DEFAULT 1,
  last_seen_at    TEXT NOT NULL,
  claimed_by      TEXT,
  diff_id         TEXT
);
CREATE INDEX IF NOT EXISTS tickets_queue ON tickets (status, priority_order, created_ms, seq);
CREATE UNIQUE INDEX IF NOT EXISTS tickets_open_fingerprint ON tickets (fingerprint) WHERE status IN (${OPEN_SQL});
CREATE INDEX IF NOT EXISTS tickets_fingerprint ON tickets (fingerprint, seq);
CREATE TABLE IF NOT EXISTS locks (
  name        TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  acquired_ms INTEGER NOT NULL
);
`;

interface Row {
  seq: number;
  id: string;
  source: TicketSource;
  contract_fqn: string | null;
  error_type: string;
  raw_error: string;
  context: string;
  status: TicketStatus;
  tier: number;
  priority: Priority;
  priority_order: number;
  fixable_by: FixableBy;
  proposal: string | null;
  created_at: string;
  created_ms: number;
  updated_at: string;
  resolved_at: string | null;
  resolution_note: string;
  fingerprint: string;
  occurrences: number;
  last_seen_at: string;
  claimed_by: string | null;
  diff_id: string | null;
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
  resolution_note?: string;
  /**
   * A repeat of a report whose latest ticket failed for a reason the repeat cannot change adds to
   * that ticket instead of opening another: always when it is not fixable by a contract (a data or
   * generator error), and when its note starts with this text (no LLM provider, while there is
   * still none). An app failing on every request so files one ticket, not thousands.
   */
  foldIntoFailed?: string | null;
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
}

/** Identifies this process as the holder of a claim; `host:pid`, so a dead claimer can be detected. */
export const PROCESS_OWNER = `${hostname()}:${process.pid}`;

/**
 * SQLite store of tickets (`.forge/healer/healer.db`). WAL mode lets readers (status, the HTTP
 * service) run while a pipeline writes; every state change is one transaction, and `NORMAL`
 * synchronous mode in WAL is still durable against a process crash (only power loss can cost the
 * last commits), which is the failure the Healer has to survive.
 */
export class TicketStore {
  readonly db: Database.Database;
  private readonly now: Clock;

  constructor(
    readonly path: string,
    options: { now?: Clock } = {},
  ) {
    this.now = options.now ?? systemClock;
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 10000");
    this.db.pragma("foreign_keys = ON");
    const version = this.db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new HealerError("invalid_state", `${path} was written by a newer Charter (store version ${version}); upgrade Charter`);
    }
    this.db.exec(SCHEMA);
    if (version < SCHEMA_VERSION) this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private stamp(): { iso: string; ms: number } {
    const d = this.now();
    return { iso: isoWithOffset(d), ms: d.getTime() };
  }

  /**
   * Adds a report: when an open ticket has the same fingerprint, its occurrence count and last-seen
   * time go up; otherwise a new `queued` ticket is created. One transaction, so two processes
   * reporting the same error at once still end with one ticket.
   */
  ingest(t: NewTicket): { ticket: Ticket; created: boolean } {
    return this.db.transaction(() => this.ingestInTransaction(t))();
  }

  /** Many reports in one transaction (a scan's findings): all become tickets, or none. */
  ingestMany(list: readonly NewTicket[]): { ticket: Ticket; created: boolean }[] {
    return this.db.transaction(() => list.map((t) => this.ingestInTransaction(t)))();
  }

  private ingestInTransaction(t: NewTicket): { ticket: Ticket; created: boolean } {
    const { iso, ms } = this.stamp();
    const bumped = this.stmt(
      `UPDATE tickets SET occurrences = occurrences + 1, last_seen_at = ?, updated_at = ?
       WHERE fingerprint = ? AND status IN (${OPEN_SQL}) RETURNING *`,
    ).get(iso, iso, t.fingerprint) as Row | undefined;
    if (bumped) return { ticket: toTicket(bumped), created: false };
    const note = t.foldIntoFailed ?? null;
    const folded = this.stmt(
      `UPDATE tickets SET occurrences = occurrences + 1, last_seen_at = ?, updated_at = ?
       WHERE seq = (SELECT MAX(seq) FROM tickets WHERE fingerprint = ?)
         AND status = 'failed' AND (fixable_by <> 'contract' OR (? IS NOT NULL AND substr(resolution_note, 1, length(?)) = ?))
       RETURNING *`,
    ).get(iso, iso, t.fingerprint, note, note, note) as Row | undefined;
    if (folded) return { ticket: toTicket(folded), created: false };
    const row = this.stmt(
      `INSERT INTO tickets (id, source, contract_fqn, error_type, raw_error, context, status, tier, priority, priority_order,
         fixable_by, created_at, created_ms, updated_at, resolution_note, fingerprint, occurrences, last_seen_at)
       VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?) RETURNING *`,
    ).get(
      randomUUID(),
      t.source,
      t.contract_fqn,
      t.error_type,
      t.raw_error,
      JSON.stringify(t.context),
      t.tier,
      t.priority,
      PRIORITY_ORDER[t.priority],
      t.fixable_by,
      iso,
      ms,
      iso,
      t.resolution_note ?? "",
      t.fingerprint,
      iso,
    ) as Row;
    return { ticket: toTicket(row), created: true };
  }

  /**
   * Claims the next queued ticket (priority, then oldest) by moving it to `analyzing` in one
   * UPDATE guarded by `status = 'queued'`: two processes can never claim the same ticket.
   */
  claimNext(): Ticket | null {
    const { iso } = this.stamp();
    const row = this.stmt(
      `UPDATE tickets SET status = 'analyzing', claimed_by = ?, updated_at = ?
       WHERE id = (SELECT id FROM tickets WHERE status = 'queued' ORDER BY priority_order, created_ms, seq LIMIT 1)
         AND status = 'queued'
       RETURNING *`,
    ).get(PROCESS_OWNER, iso) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  /** Claims one given ticket when it is still queued. */
  claim(id: string): Ticket | null {
    const { iso } = this.stamp();
    const row = this.stmt(
      `UPDATE tickets SET status = 'analyzing', claimed_by = ?, updated_at = ? WHERE id = ? AND status = 'queued' RETURNING *`,
    ).get(PROCESS_OWNER, iso, id) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  /**
   * Moves a ticket from `from` to `to` in one guarded UPDATE; returns null when the ticket was not
   * in `from` any more (someone else moved it). Terminal states get `resolved_at` and lose the claim.
   */
  transition(id: string, from: TicketStatus | readonly TicketStatus[], to: TicketStatus, update: TicketUpdate = {}): Ticket | null {
    const froms = typeof from === "string" ? [from] : from;
    const { iso } = this.stamp();
    const sets = ["status = ?", "updated_at = ?"];
    const values: unknown[] = [to, iso];
    const terminal = TERMINAL_STATUSES.includes(to);
    if (terminal) {
      sets.push("resolved_at = ?", "claimed_by = NULL");
      values.push(iso);
    } else if (to === "queued") {
      sets.push("resolved_at = NULL", "claimed_by = NULL");
    }
    for (const [key, value] of Object.entries(update)) {
      if (value === undefined) continue;
      if (key === "claimed_by" && terminal) continue;
      sets.push(`${key} = ?`);
      if (key === "proposal") values.push(value === null ? null : JSON.stringify(value));
      else if (key === "priority") {
        values.push(value);
        sets.push("priority_order = ?");
        values.push(PRIORITY_ORDER[value as Priority]);
      } else values.push(value);
    }
    const row = this.stmt(
      `UPDATE tickets SET ${sets.join(", ")} WHERE id = ? AND status IN (${froms.map(() => "?").join(", ")}) RETURNING *`,
    ).get(...values, id, ...froms) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  /** Updates fields without a status change (a proposal recorded before it is applied, say). */
  update(id: string, status: TicketStatus, update: TicketUpdate): Ticket | null {
    return this.transition(id, status, status, update);
  }

  /**
   * Hands back work of processes that died mid-way (kill -9, power loss): `analyzing` tickets go
   * back to the queue, `approved` ones lose their claim so the next run resumes applying them.
   * A claim is stale when its process no longer exists on this host.
   */
  recoverStale(isAlive: (owner: string) => boolean = ownerAlive): { requeued: number; released: number } {
    return this.db.transaction(() => {
      const rows = this.stmt(
        `SELECT id, status, claimed_by FROM tickets WHERE status IN ('analyzing', 'approved') AND claimed_by IS NOT NULL`,
      ).all() as Pick<Row, "id" | "status" | "claimed_by">[];
      let requeued = 0;
      let released = 0;
      const { iso } = this.stamp();
      for (const r of rows) {
        if (r.claimed_by === null || isAlive(r.claimed_by)) continue;
        if (r.status === "analyzing") {
          this.stmt(
            `UPDATE tickets SET status = 'queued', claimed_by = NULL, updated_at = ?,
               resolution_note = 'requeued after an interrupted run' WHERE id = ? AND status = 'analyzing'`,
          ).run(iso, r.id);
          requeued++;
        } else {
          this.stmt(`UPDATE tickets SET claimed_by = NULL, updated_at = ? WHERE id = ? AND status = 'approved'`).run(iso, r.id);
          released++;
        }
      }
      return { requeued, released };
    })();
  }

  /** Claims an approved ticket nobody is applying (left by an interrupted run). */
  claimApproved(): Ticket | null {
    const { iso } = this.stamp();
    const row = this.stmt(
      `UPDATE tickets SET claimed_by = ?, updated_at = ?
       WHERE id = (SELECT id FROM tickets WHERE status = 'approved' AND claimed_by IS NULL ORDER BY priority_order, created_ms, seq LIMIT 1)
         AND status = 'approved' AND claimed_by IS NULL
       RETURNING *`,
    ).get(PROCESS_OWNER, iso) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  get(id: string): Ticket | null {
    const row = this.stmt("SELECT * FROM tickets WHERE id = ?").get(id) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  /**
   * Finds a ticket by full id or by a unique prefix of at least four characters. Short,
   * ambiguous and unknown ids are `HealerError`s with a message that says what to do.
   */
  resolve(idOrPrefix: string): Ticket {
    const key = idOrPrefix.trim().toLowerCase();
    if (!/^[0-9a-f-]+$/.test(key))
      throw new HealerError("invalid_id", `invalid ticket id ${JSON.stringify(idOrPrefix)}: expected a UUID or a prefix of one`);
    const exact = this.get(key);
    if (exact) return exact;
    if (key.length < MIN_PREFIX_LENGTH) {
      throw new HealerError(
        "invalid_id",
        `ticket id prefix ${JSON.stringify(idOrPrefix)} is too short: give at least ${MIN_PREFIX_LENGTH} characters`,
      );
    }
    const rows = this.stmt("SELECT * FROM tickets WHERE substr(id, 1, ?) = ? ORDER BY seq LIMIT 6").all(key.length, key) as Row[];
    if (rows.length === 0) throw new HealerError("not_found", `no ticket with id or prefix ${JSON.stringify(idOrPrefix)}`);
    if (rows.length > 1) {
      const shown = rows.slice(0, 5).map((r) => r.id.slice(0, 12));
      throw new HealerError(
        "ambiguous",
        `ticket id prefix ${JSON.stringify(idOrPrefix)} is ambiguous: it matches ${rows.length > 5 ? "more than 5" : rows.length} tickets (${shown.join(", ")}); give more characters`,
      );
    }
    return toTicket(rows[0] as Row);
  }

  /** Tickets in queue order (priority, then oldest first), optionally filtered. */
  list(filter: TicketFilter = {}, limit = 10_000): Ticket[] {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.status) {
      where.push("status = ?");
      values.push(filter.status);
    }
    if (filter.priority) {
      where.push("priority = ?");
      values.push(filter.priority);
    }
    if (filter.contract_fqn !== undefined) {
      where.push("contract_fqn = ?");
      values.push(filter.contract_fqn);
    }
    const sql = `SELECT * FROM tickets ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY priority_order, created_ms, seq LIMIT ?`;
    return (this.stmt(sql).all(...values, limit) as Row[]).map(toTicket);
  }

  countByStatus(): Record<TicketStatus, number> {
    const out: Record<TicketStatus, number> = { queued: 0, analyzing: 0, proposed: 0, approved: 0, applied: 0, failed: 0, rejected: 0 };
    for (const r of this.stmt("SELECT status, COUNT(*) AS n FROM tickets GROUP BY status").all() as { status: TicketStatus; n: number }[]) {
      out[r.status] = r.n;
    }
    return out;
  }

  /**
   * A named lease held in the database (the apply step takes one, so two processes never rewrite
   * contracts of one project at the same time). Stale leases of dead processes are taken over.
   */
  tryLock(name: string, isAlive: (owner: string) => boolean = ownerAlive): boolean {
    return this.db
      .transaction(() => {
        const row = this.stmt("SELECT owner FROM locks WHERE name = ?").get(name) as { owner: string } | undefined;
        if (row && row.owner !== PROCESS_OWNER && isAlive(row.owner)) return false;
        this.stmt("INSERT OR REPLACE INTO locks (name, owner, acquired_ms) VALUES (?, ?, ?)").run(name, PROCESS_OWNER, Date.now());
        return true;
      })
      .immediate();
  }

  unlock(name: string): void {
    this.stmt("DELETE FROM locks WHERE name = ? AND owner = ?").run(name, PROCESS_OWNER);
  }

  private readonly statements = new Map<string, Database.Statement>();
  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }
}

function toTicket(r: Row): Ticket {
  return {
    id: r.id,
    source: r.source,
    contract_fqn: r.contract_fqn,
    error_type: r.error_type,
    raw_error: r.raw_error,
    context: JSON.parse(r.context) as TicketContext,
    status: r.status,
    tier: r.tier as Tier,
    priority: r.priority,
    priority_order: r.priority_order,
    fixable_by: r.fixable_by,
    proposal: r.proposal === null ? null : (JSON.parse(r.proposal) as Proposal),
    created_at: r.created_at,
    updated_at: r.updated_at,
    resolved_at: r.resolved_at,
    resolution_note: r.resolution_note,
    fingerprint: r.fingerprint,
    occurrences: r.occurrences,
    last_seen_at: r.last_seen_at,
    diff_id: r.diff_id,
  };
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
