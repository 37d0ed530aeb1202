import { randomUUID } from "node:crypto";
import pg from "pg";
import { type Clock, isoWithOffset, systemClock } from "./clock.js";
import { HealerError } from "./errors.js";
import {
  checkIdKey,
  type IngestResult,
  MIN_PREFIX_LENGTH,
  type NewTicket,
  type Outcomes,
  ownerAlive,
  PROCESS_OWNER,
  pickByPrefix,
  redactUrl,
  type TicketFilter,
  type TicketRow,
  type TicketStore,
  type TicketUpdate,
} from "./store.js";
import { missingColumnsSql, OPEN_SQL, ticketTableSql, toTicket } from "./ticket-table.js";
import { PRIORITY_ORDER, type Priority, TERMINAL_STATUSES, type Ticket, type TicketStatus } from "./types.js";

const SCHEMA_VERSION = 2;
/** How long a claim or lock stays valid without a heartbeat: a replica killed mid-way gives its work back after this. */
export const LEASE_SECONDS = 60;
/** Heartbeats renew the leases of live claims well before they run out. */
const HEARTBEAT_MS = (LEASE_SECONDS * 1000) / 4;
/** Key of the advisory lock that serialises schema creation between replicas starting at once. */
const SCHEMA_LOCK = "charter.healer.schema";

/**
 * The tables live in their own schema (`healer`), so the store can share a database with the
 * generated app (whose tables are named after its entities) without a clash. The ticket columns are
 * ticket-table.ts's, with the lease of a claim: `lease_token` names the store instance that holds
 * it and `lease_until` is renewed by that instance's heartbeat, in the database's clock.
 */
const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS healer;
CREATE TABLE IF NOT EXISTS healer.meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
${ticketTableSql("postgres", "healer.tickets")}CREATE INDEX IF NOT EXISTS tickets_lease ON healer.tickets (lease_token) WHERE lease_token IS NOT NULL;
CREATE TABLE IF NOT EXISTS healer.locks (
  name        TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  token       TEXT NOT NULL,
  acquired_ms BIGINT NOT NULL,
  lease_until TIMESTAMPTZ NOT NULL
);
`;

type Queryable = Pick<pg.PoolClient, "query">;

/** Locks the newest ticket of each fingerprint of a batch, in one order (so batches cannot deadlock on them). */
const INGEST_LOCK_SQL = `
SELECT seq FROM healer.tickets
WHERE seq IN (SELECT MAX(seq) FROM healer.tickets WHERE fingerprint = ANY($1::text[]) GROUP BY fingerprint)
ORDER BY seq FOR UPDATE`;

/** One batch of reports (see `ingestMany`); arrays are parallel, one element per fingerprint. */
const INGEST_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::int[],
                       $10::text[], $11::text[], $12::text[], $13::int[], $14::text[], $15::text[], $16::bigint[], $17::text[],
                       $18::text[], $19::text[])
    WITH ORDINALITY AS i(id, source, contract_fqn, error_type, raw_error, context, tier, priority, priority_order,
                         fixable_by, resolution_note, fingerprint, n, note, iso, ms, last_iso, request_id, trace_id, ord)
),
latest AS (
  SELECT DISTINCT ON (t.fingerprint) t.seq FROM healer.tickets t JOIN input i ON i.fingerprint = t.fingerprint
  ORDER BY t.fingerprint, t.seq DESC
),
folded AS (
  UPDATE healer.tickets t SET occurrences = t.occurrences + i.n, last_seen_at = i.last_iso, updated_at = i.last_iso,
    request_id = COALESCE(i.request_id, t.request_id), trace_id = COALESCE(i.trace_id, t.trace_id)
  FROM input i
  WHERE t.seq IN (SELECT seq FROM latest) AND t.fingerprint = i.fingerprint AND t.status = 'failed'
    AND (t.fixable_by <> 'contract' OR (i.note IS NOT NULL AND starts_with(t.resolution_note, i.note)))
  RETURNING t.*, false AS inserted
),
upserted AS (
  INSERT INTO healer.tickets (id, source, contract_fqn, error_type, raw_error, context, status, tier, priority, priority_order,
    fixable_by, created_at, created_ms, updated_at, resolution_note, fingerprint, occurrences, last_seen_at, request_id, trace_id)
  SELECT i.id, i.source, i.contract_fqn, i.error_type, i.raw_error, i.context, 'queued', i.tier, i.priority, i.priority_order,
    i.fixable_by, i.iso, i.ms, i.last_iso, i.resolution_note, i.fingerprint, i.n, i.last_iso, i.request_id, i.trace_id
  FROM input i WHERE i.fingerprint NOT IN (SELECT fingerprint FROM folded)
  ORDER BY i.ord
  ON CONFLICT (fingerprint) WHERE status IN (${OPEN_SQL})
  DO UPDATE SET occurrences = healer.tickets.occurrences + EXCLUDED.occurrences, last_seen_at = EXCLUDED.last_seen_at,
    updated_at = EXCLUDED.updated_at, request_id = COALESCE(EXCLUDED.request_id, healer.tickets.request_id),
    trace_id = COALESCE(EXCLUDED.trace_id, healer.tickets.trace_id)
  RETURNING healer.tickets.*, (healer.tickets.xmax = 0) AS inserted
)
SELECT * FROM folded UNION ALL SELECT * FROM upserted`;

/** SQLSTATEs after which a whole transaction is simply run again: deadlock, serialization failure. */
const RETRYABLE = new Set(["40P01", "40001"]);

/**
 * PostgreSQL store of tickets (`HEALER_DATABASE_URL`), shared by several Healer replicas. Claims
 * take the next queued row with `FOR UPDATE SKIP LOCKED`, so replicas never wait on each other's
 * rows and never claim one ticket twice; each claim carries a lease that a heartbeat renews while
 * the claimer lives, so the work of a replica that was killed (on any machine) goes back to the
 * queue once its lease runs out. The schema is created on first use under an advisory lock, so
 * replicas starting together do it once.
 */
export class PostgresTicketStore implements TicketStore {
  readonly backend = "postgres";
  readonly shared = true;
  readonly location: string;
  private readonly pool: pg.Pool;
  private readonly now: Clock;
  /** This store instance: the holder named in its claims' and locks' leases. */
  private readonly token = randomUUID();
  private ready: Promise<void> | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(url: string, options: { now?: Clock; poolSize?: number } = {}) {
    this.now = options.now ?? systemClock;
    this.location = redactUrl(url);
    this.pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, application_name: "charter-healer" });
    // An idle connection the server closes (a restart, a failover) must not crash the Healer; the
    // pool opens a new one on the next query.
    this.pool.on("error", (e) => process.stderr.write(`healer: PostgreSQL connection lost: ${e.message}\n`));
  }

  open(): Promise<void> {
    this.ready ??= this.migrate().catch((e: Error) => {
      this.ready = null;
      throw new HealerError("invalid_state", `cannot open the Healer store at ${this.location}: ${e.message}`);
    });
    return this.ready;
  }

  private async migrate(): Promise<void> {
    await this.tx(async (c) => {
      await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [SCHEMA_LOCK]);
      const exists = await c.query("SELECT to_regclass('healer.meta') IS NOT NULL AS present");
      if (exists.rows[0]?.present) {
        const v = await c.query("SELECT value FROM healer.meta WHERE key = 'schema_version'");
        const version = Number(v.rows[0]?.value ?? 0);
        if (version > SCHEMA_VERSION) {
          throw new Error(`it was written by a newer Charter (store version ${version}); upgrade Charter`);
        }
      }
      await c.query(SCHEMA);
      // A table written by an older Charter lacks newer columns; CREATE TABLE IF NOT EXISTS left it as it was.
      const columns = await c.query<{ column_name: string }>(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'healer' AND table_name = 'tickets'",
      );
      const present = new Set(columns.rows.map((r) => r.column_name));
      for (const sql of missingColumnsSql("postgres", "healer.tickets", present)) await c.query(sql);
      await c.query(
        `INSERT INTO healer.meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value WHERE healer.meta.value::int < EXCLUDED.value::int`,
        [String(SCHEMA_VERSION)],
      );
    });
    if (!this.closed) {
      this.heartbeat = setInterval(() => void this.renewLeases().catch(() => undefined), HEARTBEAT_MS);
      this.heartbeat.unref();
    }
  }

  /** Keeps this instance's claims and locks alive; a claimer that stops renewing loses them after `LEASE_SECONDS`. */
  private async renewLeases(): Promise<void> {
    await this.pool.query(
      `UPDATE healer.tickets SET lease_until = now() + make_interval(secs => $2)
       WHERE lease_token = $1 AND status IN ('analyzing', 'approved')`,
      [this.token, LEASE_SECONDS],
    );
    await this.pool.query("UPDATE healer.locks SET lease_until = now() + make_interval(secs => $2) WHERE token = $1", [
      this.token,
      LEASE_SECONDS,
    ]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    try {
      await this.ready;
    } catch {
      // Nothing was opened.
    }
    await this.pool.end();
  }

  private stamp(): { iso: string; ms: number } {
    const d = this.now();
    return { iso: isoWithOffset(d), ms: d.getTime() };
  }

  private async query(sql: string, values: unknown[] = []): Promise<TicketRow[]> {
    await this.open();
    return (await this.pool.query(sql, values)).rows as TicketRow[];
  }

  /** Runs `fn` in one transaction, again from the start after a deadlock or serialization failure. */
  private async tx<T>(fn: (c: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.pool.connect();
      try {
        await c.query("BEGIN");
        const out = await fn(c);
        await c.query("COMMIT");
        return out;
      } catch (e) {
        await c.query("ROLLBACK").catch(() => undefined);
        if (attempt < 5 && RETRYABLE.has((e as { code?: string }).code ?? "")) continue;
        throw e;
      } finally {
        c.release();
      }
    }
  }

  async ingest(t: NewTicket): Promise<IngestResult> {
    const [one] = await this.ingestMany([t]);
    return one as IngestResult;
  }

  /**
   * The whole list in one transaction of two statements however long it is. Reports of one fingerprint are merged first (the first one's fields, the count as
   * occurrences). Per fingerprint: a repeat of a failed ticket folds into it (see
   * `NewTicket.foldIntoFailed`); otherwise the INSERT either creates the ticket or, meeting the
   * open ticket of that fingerprint (the unique partial index; a concurrent insert waits for the
   * other to commit), adds the occurrences to it. The newest ticket of a fingerprint is the open
   * one when there is one, so trying the failed ticket first changes nothing for open tickets.
   */
  async ingestMany(list: readonly NewTicket[]): Promise<IngestResult[]> {
    if (list.length === 0) return [];
    const groups = new Map<string, { t: NewTicket; n: number; iso: string; ms: number; lastIso: string; last: NewTicket }>();
    for (const t of list) {
      const { iso, ms } = this.stamp();
      const g = groups.get(t.fingerprint);
      if (g) {
        g.n++;
        g.lastIso = iso;
        g.last = t;
      } else groups.set(t.fingerprint, { t, n: 1, iso, ms, lastIso: iso, last: t });
    }
    const rows = [...groups.values()];
    const col = <T>(f: (g: (typeof rows)[number]) => T): T[] => rows.map(f);
    const values = [
      col(() => randomUUID()),
      col((g) => g.t.source),
      col((g) => g.t.contract_fqn),
      col((g) => g.t.error_type),
      col((g) => g.t.raw_error),
      col((g) => JSON.stringify(g.t.context)),
      col((g) => g.t.tier),
      col((g) => g.t.priority),
      col((g) => PRIORITY_ORDER[g.t.priority]),
      col((g) => g.t.fixable_by),
      col((g) => g.t.resolution_note ?? ""),
      col((g) => g.t.fingerprint),
      col((g) => g.n),
      col((g) => g.t.foldIntoFailed ?? null),
      col((g) => g.iso),
      col((g) => g.ms),
      col((g) => g.lastIso),
      // The ids of the latest report: the request whose trace is most likely still kept.
      col((g) => g.last.request_id ?? null),
      col((g) => g.last.trace_id ?? null),
    ];
    await this.open();
    const stored = await this.tx(async (c) => {
      // Lock the newest ticket of each fingerprint first: a ticket failing meanwhile on another
      // replica then either happened before (the statement below sees it failed and folds into it)
      // or waits for this commit, as it would with SQLite's serialised writers.
      // Named: prepared once per connection, so the batch statement is not parsed and planned per call.
      await c.query({ name: "healer_ingest_lock", text: INGEST_LOCK_SQL, values: [values[11]] });
      return (await c.query({ name: "healer_ingest", text: INGEST_SQL, values })).rows as (TicketRow & { inserted: boolean })[];
    });
    const byFingerprint = new Map(stored.map((r) => [r.fingerprint, r]));
    const seen = new Set<string>();
    return list.map((t) => {
      const row = byFingerprint.get(t.fingerprint);
      if (!row) throw new Error(`ticket store: report ${t.fingerprint} was not stored`);
      const first = !seen.has(t.fingerprint);
      seen.add(t.fingerprint);
      return { ticket: toTicket(row), created: first && row.inserted };
    });
  }

  /** The claim's owner, lease holder and lease end, as SET items starting at `$first`. */
  private claimSets(first: number): { sql: string; values: unknown[] } {
    return {
      sql: `claimed_by = $${first}, lease_token = $${first + 1}, lease_until = now() + make_interval(secs => $${first + 2})`,
      values: [PROCESS_OWNER, this.token, LEASE_SECONDS],
    };
  }

  async claimNext(): Promise<Ticket | null> {
    const { iso } = this.stamp();
    const claim = this.claimSets(2);
    const [row] = await this.query(
      `UPDATE healer.tickets SET status = 'analyzing', updated_at = $1, claims = claims + 1, ${claim.sql}
       WHERE seq = (SELECT seq FROM healer.tickets WHERE status = 'queued'
                    ORDER BY priority_order, created_ms, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
         AND status = 'queued'
       RETURNING *`,
      [iso, ...claim.values],
    );
    return row ? toTicket(row) : null;
  }

  async claim(id: string): Promise<Ticket | null> {
    const { iso } = this.stamp();
    const claim = this.claimSets(3);
    const [row] = await this.query(
      `UPDATE healer.tickets SET status = 'analyzing', updated_at = $1, claims = claims + 1, ${claim.sql}
       WHERE id = $2 AND status = 'queued' RETURNING *`,
      [iso, id, ...claim.values],
    );
    return row ? toTicket(row) : null;
  }

  async claimApproved(): Promise<Ticket | null> {
    const { iso } = this.stamp();
    const claim = this.claimSets(2);
    const [row] = await this.query(
      `UPDATE healer.tickets SET updated_at = $1, claims = claims + 1, ${claim.sql}
       WHERE seq = (SELECT seq FROM healer.tickets WHERE status = 'approved' AND claimed_by IS NULL
                    ORDER BY priority_order, created_ms, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
         AND status = 'approved' AND claimed_by IS NULL
       RETURNING *`,
      [iso, ...claim.values],
    );
    return row ? toTicket(row) : null;
  }

  async transition(
    id: string,
    from: TicketStatus | readonly TicketStatus[],
    to: TicketStatus,
    update: TicketUpdate = {},
  ): Promise<Ticket | null> {
    const froms = typeof from === "string" ? [from] : [...from];
    const { iso } = this.stamp();
    const values: unknown[] = [];
    const p = (v: unknown): string => {
      values.push(v);
      return `$${values.length}`;
    };
    const sets = [`status = ${p(to)}`, `updated_at = ${p(iso)}`];
    const terminal = TERMINAL_STATUSES.includes(to);
    const release = "claimed_by = NULL, lease_token = NULL, lease_until = NULL";
    if (terminal) sets.push(`resolved_at = ${p(iso)}`, release);
    else if (to === "queued") sets.push("resolved_at = NULL", release);
    for (const [key, value] of Object.entries(update)) {
      if (value === undefined) continue;
      if (key === "claimed_by") {
        if (terminal || to === "queued") continue;
        if (value === null) sets.push(release);
        else
          sets.push(
            `claimed_by = ${p(value)}`,
            `lease_token = ${p(this.token)}`,
            `lease_until = now() + make_interval(secs => ${p(LEASE_SECONDS)})`,
          );
      } else if (key === "proposal") sets.push(`proposal = ${p(value === null ? null : JSON.stringify(value))}`);
      else if (key === "priority") sets.push(`priority = ${p(value)}`, `priority_order = ${p(PRIORITY_ORDER[value as Priority])}`);
      else if (UPDATABLE.has(key)) sets.push(`${key} = ${p(value)}`);
    }
    const [row] = await this.query(
      `UPDATE healer.tickets SET ${sets.join(", ")} WHERE id = ${p(id)} AND status = ANY(${p(froms)}::text[]) RETURNING *`,
      values,
    );
    return row ? toTicket(row) : null;
  }

  update(id: string, status: TicketStatus, update: TicketUpdate): Promise<Ticket | null> {
    return this.transition(id, status, status, update);
  }

  /**
   * A claim is stale when its lease ran out (its holder stopped renewing it: killed, or cut off
   * from the database) or when its owner is a process of this host that no longer exists.
   */
  async recoverStale(isAlive: (owner: string) => boolean = ownerAlive): Promise<{ requeued: number; released: number }> {
    const owners = await this.query(
      "SELECT DISTINCT claimed_by FROM healer.tickets WHERE status IN ('analyzing', 'approved') AND claimed_by IS NOT NULL",
    );
    const dead = owners.map((r) => r.claimed_by as string).filter((o) => !isAlive(o));
    const { iso } = this.stamp();
    const stale = "claimed_by IS NOT NULL AND (COALESCE(lease_until < now(), true) OR claimed_by = ANY($2::text[]))";
    const requeued = await this.query(
      `UPDATE healer.tickets SET status = 'queued', claimed_by = NULL, lease_token = NULL, lease_until = NULL, updated_at = $1,
         resolution_note = 'requeued after an interrupted run'
       WHERE status = 'analyzing' AND ${stale} RETURNING id`,
      [iso, dead],
    );
    const released = await this.query(
      `UPDATE healer.tickets SET claimed_by = NULL, lease_token = NULL, lease_until = NULL, updated_at = $1
       WHERE status = 'approved' AND ${stale} RETURNING id`,
      [iso, dead],
    );
    return { requeued: requeued.length, released: released.length };
  }

  async get(id: string): Promise<Ticket | null> {
    const [row] = await this.query("SELECT * FROM healer.tickets WHERE id = $1", [id]);
    return row ? toTicket(row) : null;
  }

  async resolve(idOrPrefix: string): Promise<Ticket> {
    const key = checkIdKey(idOrPrefix);
    const exact = await this.get(key);
    if (exact) return exact;
    const rows =
      key.length < MIN_PREFIX_LENGTH
        ? []
        : await this.query("SELECT * FROM healer.tickets WHERE starts_with(id, $1) ORDER BY seq LIMIT 6", [key]);
    return pickByPrefix(idOrPrefix, key, rows.map(toTicket));
  }

  async list(filter: TicketFilter = {}, limit = 10_000): Promise<Ticket[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    for (const key of ["status", "priority", "contract_fqn"] as const) {
      const v = filter[key];
      if (v === undefined) continue;
      values.push(v);
      where.push(`${key} = $${values.length}`);
    }
    values.push(limit);
    const rows = await this.query(
      `SELECT * FROM healer.tickets ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY priority_order, created_ms, seq LIMIT $${values.length}`,
      values,
    );
    return rows.map(toTicket);
  }

  async countByStatus(): Promise<Record<TicketStatus, number>> {
    const out: Record<TicketStatus, number> = { queued: 0, analyzing: 0, proposed: 0, approved: 0, applied: 0, failed: 0, rejected: 0 };
    const rows = (await this.query("SELECT status, COUNT(*) AS n FROM healer.tickets GROUP BY status")) as unknown as {
      status: TicketStatus;
      n: string;
    }[];
    for (const r of rows) out[r.status] = Number(r.n);
    return out;
  }

  async outcomes(limits: { recurring: number; recent: number }): Promise<Outcomes> {
    const rates = (await this.query(
      `SELECT tier, COUNT(*) FILTER (WHERE status = 'applied') AS ok, COUNT(*) AS n FROM healer.tickets
       WHERE status IN ('applied', 'failed', 'rejected') GROUP BY tier`,
    )) as unknown as { tier: number; ok: string; n: string }[];
    const recurring = (await this.query(
      `SELECT COALESCE(contract_fqn, '') AS contract_fqn, error_type, SUM(occurrences) AS count FROM healer.tickets
       GROUP BY COALESCE(contract_fqn, ''), error_type HAVING SUM(occurrences) > 1
       ORDER BY count DESC, contract_fqn, error_type LIMIT $1`,
      [limits.recurring],
    )) as unknown as { contract_fqn: string; error_type: string; count: string }[];
    const recent = (await this.query(
      `SELECT id, COALESCE(contract_fqn, '') AS fqn, status, tier FROM healer.tickets
       WHERE resolved_at IS NOT NULL ORDER BY updated_at DESC, seq DESC LIMIT $1`,
      [limits.recent],
    )) as unknown as Outcomes["recent"];
    return {
      rates: rates.map((r) => ({ tier: r.tier, ok: Number(r.ok), n: Number(r.n) })),
      recurring: recurring.map((r) => ({ ...r, count: Number(r.count) })),
      recent,
    };
  }

  /**
   * Takes the lock when it is free, already ours, or held by a holder whose lease ran out or whose
   * process is gone. The row is read under FOR UPDATE, so two takers decide one after the other.
   */
  async tryLock(name: string, isAlive: (owner: string) => boolean = ownerAlive): Promise<boolean> {
    await this.open();
    return this.tx(async (c) => {
      const held = await c.query("SELECT owner, token, lease_until < now() AS expired FROM healer.locks WHERE name = $1 FOR UPDATE", [
        name,
      ]);
      const row = held.rows[0] as { owner: string; token: string; expired: boolean } | undefined;
      if (row && row.token !== this.token && !row.expired && isAlive(row.owner)) return false;
      const taken = await c.query(
        `INSERT INTO healer.locks (name, owner, token, acquired_ms, lease_until) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
         ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, token = EXCLUDED.token, acquired_ms = EXCLUDED.acquired_ms,
           lease_until = EXCLUDED.lease_until
         WHERE healer.locks.token = $6
         RETURNING name`,
        [name, PROCESS_OWNER, this.token, Date.now(), LEASE_SECONDS, row?.token ?? this.token],
      );
      return taken.rows.length === 1;
    });
  }

  async unlock(name: string): Promise<void> {
    await this.query("DELETE FROM healer.locks WHERE name = $1 AND token = $2", [name, this.token]);
  }
}

/** Columns a `TicketUpdate` may set directly (the others are handled on their own above). */
const UPDATABLE = new Set(["resolution_note", "diff_id", "tier", "error_type", "fixable_by"]);
