import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { type Clock, isoWithOffset, systemClock } from "../clock.js";
import { HealerError } from "../errors.js";
import { PRIORITY_ORDER, type Priority, TERMINAL_STATUSES, type Ticket, type TicketStatus } from "../types.js";
import {
  checkIdKey,
  type IngestResult,
  ingestOutcome,
  MIN_PREFIX_LENGTH,
  type NewTicket,
  type Outcomes,
  ownerAlive,
  PROCESS_OWNER,
  pickByPrefix,
  type TicketFilter,
  type TicketRow,
  type TicketStore,
  type TicketUpdate,
} from "./store.js";
import {
  duplicateFingerprintsSql,
  fingerprintIndexSql,
  type MergeRow,
  mergePlan,
  missingColumnsSql,
  REPORT_KEY_PRUNE_EVERY,
  REPORT_KEY_TTL_MS,
  reportKeysTableSql,
  ticketTableSql,
  toTicket,
  upsertSetSql,
} from "./ticket-table.js";

/**
 * Version 2 added `claims`, the number of times a ticket was claimed (its processing log); version 4
 * one ticket per fingerprint in every state (duplicates merged) and the attempt and regression columns.
 */
const SCHEMA_VERSION = 4;

/** The ticket table (ticket-table.ts) and the apply lock. */
const SCHEMA = `
${ticketTableSql("sqlite", "tickets")}${reportKeysTableSql("report_keys")}CREATE TABLE IF NOT EXISTS locks (
  name        TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  acquired_ms INTEGER NOT NULL
);
`;

/** A ticket row of this table: the shared columns plus the queue's millisecond order. */
type Row = TicketRow & { seq: number; created_ms: number };

/**
 * SQLite store of tickets (`.forge/healer/healer.db`). WAL mode lets readers (status, the HTTP
 * service) run while a pipeline writes; every state change is one transaction, and `NORMAL`
 * synchronous mode in WAL is still durable against a process crash (only power loss can cost the
 * last commits), which is the failure the Healer has to survive.
 */
export class SqliteTicketStore implements TicketStore {
  readonly backend = "sqlite";
  readonly shared = false;
  readonly db: Database.Database;
  private readonly now: Clock;
  /** Reports ingested since report ids were last pruned. */
  private ingests = 0;

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
    this.db
      .transaction(() => {
        this.db.exec(SCHEMA);
        // Older files lack newer columns (version 1 the claim counter); CREATE TABLE IF NOT EXISTS left them as they were.
        const present = new Set((this.db.pragma("table_info(tickets)") as { name: string }[]).map((c) => c.name));
        for (const sql of missingColumnsSql("sqlite", "tickets", present)) this.db.exec(sql);
        this.mergeDuplicates();
        for (const sql of fingerprintIndexSql("tickets")) this.db.exec(sql);
        if (version < SCHEMA_VERSION) this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
      })
      .immediate();
  }

  /** Folds the tickets of one error a store older than version 4 opened into one (ticket-table.ts `mergePlan`). */
  private mergeDuplicates(): void {
    const fingerprints = this.db.prepare(duplicateFingerprintsSql("tickets")).pluck().all() as string[];
    for (const fp of fingerprints) {
      const plan = mergePlan(this.db.prepare("SELECT * FROM tickets WHERE fingerprint = ?").all(fp) as MergeRow[]);
      const remove = this.db.prepare("DELETE FROM tickets WHERE id = ?");
      for (const id of plan.drop) remove.run(id);
      this.db
        .prepare("UPDATE tickets SET occurrences = ?, created_at = ?, created_ms = ?, last_seen_at = ?, resolution_note = ? WHERE id = ?")
        .run(plan.occurrences, plan.created_at, plan.created_ms, plan.last_seen_at, plan.resolution_note, plan.keep);
    }
  }

  get location(): string {
    return this.path;
  }

  /** The file is open once the constructor returns. */
  async open(): Promise<void> {}

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private stamp(): { iso: string; ms: number } {
    const d = this.now();
    return { iso: isoWithOffset(d), ms: d.getTime() };
  }

  /** One transaction per report, so two processes reporting the same error at once still end with one ticket. */
  async ingest(t: NewTicket): Promise<IngestResult> {
    return this.db.transaction(() => this.ingestInTransaction(t, this.stamp()))();
  }

  /** One time stamp for the whole batch, as the PostgreSQL store does: it is one transaction. */
  async ingestMany(list: readonly NewTicket[]): Promise<IngestResult[]> {
    return this.db.transaction(() => {
      const now = this.stamp();
      return list.map((t) => this.ingestInTransaction(t, now));
    })();
  }

  /**
   * A report sent again (its `report_id` already taken) changes nothing and answers with its ticket;
   * report ids older than `REPORT_KEY_TTL_MS` are forgotten now and then.
   */
  private repeatOf(t: NewTicket, ms: number): IngestResult | null {
    if (++this.ingests % REPORT_KEY_PRUNE_EVERY === 0) this.stmt("DELETE FROM report_keys WHERE seen_ms < ?").run(ms - REPORT_KEY_TTL_MS);
    if (!t.report_id) return null;
    const fresh = this.stmt("INSERT INTO report_keys (key, seen_ms) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(t.report_id, ms);
    if (fresh.changes === 1) return null;
    const row = this.stmt("SELECT * FROM tickets WHERE fingerprint = ?").get(t.fingerprint) as Row | undefined;
    return row ? { ticket: toTicket(row), created: false, repeated: true } : null;
  }

  /** One upsert on the fingerprint (ticket-table.ts `upsertSetSql`): a new ticket, or one more occurrence of the one there is. */
  private ingestInTransaction(t: NewTicket, { iso, ms }: { iso: string; ms: number }): IngestResult {
    const repeated = this.repeatOf(t, ms);
    if (repeated) return repeated;
    const id = randomUUID();
    const row = this.stmt(
      `INSERT INTO tickets AS t (id, source, contract_fqn, error_type, raw_error, context, status, tier, priority, priority_order,
         fixable_by, created_at, created_ms, updated_at, resolution_note, fingerprint, occurrences, last_seen_at, request_id, trace_id,
         attempt_model, attempt_contracts)
       VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)
       ON CONFLICT (fingerprint) DO UPDATE SET ${upsertSetSql()}
       RETURNING *`,
    ).get(
      id,
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
      // A repeat keeps the ids of the latest request: the one whose trace is most likely still kept.
      t.request_id ?? null,
      t.trace_id ?? null,
      t.attempt_model ?? null,
      t.attempt_contracts ?? null,
    ) as Row;
    return ingestOutcome(row, id, toTicket(row));
  }

  /** One UPDATE guarded by `status = 'queued'`: two processes can never claim the same ticket. */
  async claimNext(): Promise<Ticket | null> {
    const { iso } = this.stamp();
    const row = this.stmt(
      `UPDATE tickets SET status = 'analyzing', claimed_by = ?, updated_at = ?, claims = claims + 1
       WHERE id = (SELECT id FROM tickets WHERE status = 'queued' ORDER BY priority_order, created_ms, seq LIMIT 1)
         AND status = 'queued'
       RETURNING *`,
    ).get(PROCESS_OWNER, iso) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  async claim(id: string): Promise<Ticket | null> {
    const { iso } = this.stamp();
    const row = this.stmt(
      `UPDATE tickets SET status = 'analyzing', claimed_by = ?, updated_at = ?, claims = claims + 1 WHERE id = ? AND status = 'queued' RETURNING *`,
    ).get(PROCESS_OWNER, iso, id) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  async transition(
    id: string,
    from: TicketStatus | readonly TicketStatus[],
    to: TicketStatus,
    update: TicketUpdate = {},
  ): Promise<Ticket | null> {
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

  async update(id: string, status: TicketStatus, update: TicketUpdate): Promise<Ticket | null> {
    return this.transition(id, status, status, update);
  }

  /** One SQLite file has claimers on this host only: a claim is stale when its process is gone. */
  async recoverStale(isAlive: (owner: string) => boolean = ownerAlive): Promise<{ requeued: number; released: number }> {
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

  async claimApproved(): Promise<Ticket | null> {
    const { iso } = this.stamp();
    const row = this.stmt(
      `UPDATE tickets SET claimed_by = ?, updated_at = ?, claims = claims + 1
       WHERE id = (SELECT id FROM tickets WHERE status = 'approved' AND claimed_by IS NULL ORDER BY priority_order, created_ms, seq LIMIT 1)
         AND status = 'approved' AND claimed_by IS NULL
       RETURNING *`,
    ).get(PROCESS_OWNER, iso) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  async get(id: string): Promise<Ticket | null> {
    return this.getSync(id);
  }

  private getSync(id: string): Ticket | null {
    const row = this.stmt("SELECT * FROM tickets WHERE id = ?").get(id) as Row | undefined;
    return row ? toTicket(row) : null;
  }

  async resolve(idOrPrefix: string): Promise<Ticket> {
    const key = checkIdKey(idOrPrefix);
    const exact = this.getSync(key);
    if (exact) return exact;
    const rows =
      key.length < MIN_PREFIX_LENGTH
        ? []
        : (this.stmt("SELECT * FROM tickets WHERE substr(id, 1, ?) = ? ORDER BY seq LIMIT 6").all(key.length, key) as Row[]);
    return pickByPrefix(idOrPrefix, key, rows.map(toTicket));
  }

  async list(filter: TicketFilter = {}, limit = 10_000): Promise<Ticket[]> {
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

  async countByStatus(): Promise<Record<TicketStatus, number>> {
    const out: Record<TicketStatus, number> = { queued: 0, analyzing: 0, proposed: 0, approved: 0, applied: 0, failed: 0, rejected: 0 };
    for (const r of this.stmt("SELECT status, COUNT(*) AS n FROM tickets GROUP BY status").all() as { status: TicketStatus; n: number }[]) {
      out[r.status] = r.n;
    }
    return out;
  }

  async outcomes(limits: { recurring: number; recent: number }): Promise<Outcomes> {
    const rates = this.stmt(
      `SELECT tier, SUM(status = 'applied') AS ok, COUNT(*) AS n FROM tickets
       WHERE status IN ('applied', 'failed', 'rejected') GROUP BY tier`,
    ).all() as Outcomes["rates"];
    // An error recurs when it was reported more than once: within one ticket (occurrences) or
    // across tickets that were closed and opened again.
    const recurring = this.stmt(
      `SELECT COALESCE(contract_fqn, '') AS contract_fqn, error_type, SUM(occurrences) AS count FROM tickets
       GROUP BY COALESCE(contract_fqn, ''), error_type HAVING SUM(occurrences) > 1
       ORDER BY count DESC, contract_fqn, error_type LIMIT ?`,
    ).all(limits.recurring) as Outcomes["recurring"];
    const recent = this.stmt(
      `SELECT id, COALESCE(contract_fqn, '') AS fqn, status, tier FROM tickets
       WHERE resolved_at IS NOT NULL ORDER BY updated_at DESC, seq DESC LIMIT ?`,
    ).all(limits.recent) as Outcomes["recent"];
    return { rates, recurring, recent };
  }

  async tryLock(name: string, isAlive: (owner: string) => boolean = ownerAlive): Promise<boolean> {
    return this.db
      .transaction(() => {
        const row = this.stmt("SELECT owner FROM locks WHERE name = ?").get(name) as { owner: string } | undefined;
        if (row && row.owner !== PROCESS_OWNER && isAlive(row.owner)) return false;
        this.stmt("INSERT OR REPLACE INTO locks (name, owner, acquired_ms) VALUES (?, ?, ?)").run(name, PROCESS_OWNER, Date.now());
        return true;
      })
      .immediate();
  }

  async unlock(name: string): Promise<void> {
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
