import { randomUUID } from "node:crypto";
import pg from "pg";
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
  redactUrl,
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

/** Version 3: one ticket per fingerprint in every state (duplicates merged), the attempt and regression columns. */
const SCHEMA_VERSION = 3;
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
${ticketTableSql("postgres", "healer.tickets")}${reportKeysTableSql("healer.report_keys")}CREATE INDEX IF NOT EXISTS tickets_lease ON healer.tickets (lease_token) WHERE lease_token IS NOT NULL;
CREATE TABLE IF NOT EXISTS healer.locks (
  name        TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  token       TEXT NOT NULL,
  acquired_ms BIGINT NOT NULL,
  lease_until TIMESTAMPTZ NOT NULL
);
`;

type Queryable = Pick<pg.PoolClient, "query">;

/**
 * One batch of reports (see `ingestMany`); arrays are parallel, one element per fingerprint. Rows go
 * in fingerprint order, so two batches lock the tickets they share in one order and cannot deadlock.
 */
const INGEST_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::int[],
                       $10::text[], $11::text[], $12::text[], $13::int[], $14::text[], $15::bigint[], $16::text[],
                       $17::text[], $18::text[], $19::text[], $20::text[])
    AS i(id, source, contract_fqn, error_type, raw_error, context, tier, priority, priority_order,
         fixable_by, resolution_note, fingerprint, n, iso, ms, last_iso, request_id, trace_id, attempt_model, attempt_contracts)
)
INSERT INTO healer.tickets AS t (id, source, contract_fqn, error_type, raw_error, context, status, tier, priority, priority_order,
  fixable_by, created_at, created_ms, updated_at, resolution_note, fingerprint, occurrences, last_seen_at, request_id, trace_id,
  attempt_model, attempt_contracts)
SELECT i.id, i.source, i.contract_fqn, i.error_type, i.raw_error, i.context, 'queued', i.tier, i.priority, i.priority_order,
  i.fixable_by, i.iso, i.ms, i.last_iso, i.resolution_note, i.fingerprint, i.n, i.last_iso, i.request_id, i.trace_id,
  i.attempt_model, i.attempt_contracts
FROM input i ORDER BY i.fingerprint
ON CONFLICT (fingerprint) DO UPDATE SET ${upsertSetSql()}
RETURNING t.*`;

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
  /** Reports ingested since report ids were last pruned. */
  private ingests = 0;

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
      await mergeDuplicates(c);
      for (const sql of fingerprintIndexSql("healer.tickets")) await c.query(sql);
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
   * The whole list in one statement however long it is: reports of one fingerprint are merged
   * first (the first one's fields, the count as occurrences), then each fingerprint is one upsert
   * on the unique index (ticket-table.ts `upsertSetSql`). A concurrent report of the same error
   * waits on that index for this one to commit, then adds to the ticket it made. A report sent
   * again (its `report_id` taken before) counts nothing and answers with its ticket.
   */
  async ingestMany(list: readonly NewTicket[]): Promise<IngestResult[]> {
    if (list.length === 0) return [];
    await this.open();
    return this.tx(async (c) => {
      const fresh = await this.freshReports(c, list);
      const counted = list.filter((_, i) => fresh[i]);
      const results = counted.length > 0 ? await this.upsertReports(c, counted) : [];
      const repeats = list.filter((_, i) => !fresh[i]);
      const current =
        repeats.length === 0
          ? new Map<string, TicketRow>()
          : new Map(
              (
                (await c.query("SELECT * FROM healer.tickets WHERE fingerprint = ANY($1)", [repeats.map((t) => t.fingerprint)]))
                  .rows as TicketRow[]
              ).map((r) => [r.fingerprint, r]),
            );
      let k = 0;
      return list.map((t, i) => {
        if (fresh[i]) return results[k++] as IngestResult;
        const row = current.get(t.fingerprint);
        if (!row) throw new Error(`ticket store: report ${t.report_id} was taken but its ticket is gone`);
        return { ticket: toTicket(row), created: false, repeated: true };
      });
    });
  }

  /**
   * Which reports of the list count: all but those whose `report_id` the store has already taken
   * (a report sent again after a lost answer), or that repeat an earlier one of the list. Records
   * the new ids and, now and then, forgets those older than `REPORT_KEY_TTL_MS`.
   */
  private async freshReports(c: Queryable, list: readonly NewTicket[]): Promise<boolean[]> {
    const { ms } = this.stamp();
    this.ingests += list.length;
    if (this.ingests >= REPORT_KEY_PRUNE_EVERY) {
      this.ingests = 0;
      await c.query("DELETE FROM healer.report_keys WHERE seen_ms < $1", [ms - REPORT_KEY_TTL_MS]);
    }
    const keys = [...new Set(list.map((t) => t.report_id).filter((k): k is string => typeof k === "string" && k !== ""))];
    if (keys.length === 0) return list.map(() => true);
    const { rows } = await c.query(
      "INSERT INTO healer.report_keys (key, seen_ms) SELECT k, $2 FROM unnest($1::text[]) AS k ON CONFLICT (key) DO NOTHING RETURNING key",
      [keys, ms],
    );
    const inserted = new Set((rows as { key: string }[]).map((r) => r.key));
    // The first report of a new id counts; any later one of the same id is its repeat.
    return list.map((t) => !t.report_id || inserted.delete(t.report_id));
  }

  /** The counted reports of `ingestMany` as one statement (INGEST_SQL), in the caller's transaction. */
  private async upsertReports(c: Queryable, list: readonly NewTicket[]): Promise<IngestResult[]> {
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
    const ids = col(() => randomUUID());
    const values = [
      ids,
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
      col((g) => g.iso),
      col((g) => g.ms),
      col((g) => g.lastIso),
      // The ids of the latest report: the request whose trace is most likely still kept.
      col((g) => g.last.request_id ?? null),
      col((g) => g.last.trace_id ?? null),
      col((g) => g.last.attempt_model ?? null),
      col((g) => g.last.attempt_contracts ?? null),
    ];
    // Named: prepared once per connection, so the batch statement is not parsed and planned per call.
    const stored = (await c.query({ name: "healer_ingest_v3", text: INGEST_SQL, values })).rows as TicketRow[];
    const byFingerprint = new Map(stored.map((r) => [r.fingerprint, r]));
    const idOf = new Map(rows.map((g, i) => [g.t.fingerprint, ids[i] as string]));
    const seen = new Set<string>();
    return list.map((t) => {
      const row = byFingerprint.get(t.fingerprint);
      if (!row) throw new Error(`ticket store: report ${t.fingerprint} was not stored`);
      const out = ingestOutcome(row, idOf.get(t.fingerprint) as string, toTicket(row));
      // The first report of a fingerprint in the batch is the one that created or reopened the ticket.
      const first = !seen.has(t.fingerprint);
      seen.add(t.fingerprint);
      return first ? out : { ticket: out.ticket, created: false };
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
const UPDATABLE = new Set(["resolution_note", "diff_id", "tier", "error_type", "fixable_by", "attempt_model", "attempt_contracts"]);

/** Folds the tickets of one error a store older than version 3 opened into one (ticket-table.ts `mergePlan`). */
async function mergeDuplicates(c: Queryable): Promise<void> {
  const dups = await c.query<{ fingerprint: string }>(duplicateFingerprintsSql("healer.tickets"));
  for (const { fingerprint } of dups.rows) {
    const rows = await c.query<MergeRow>("SELECT * FROM healer.tickets WHERE fingerprint = $1 FOR UPDATE", [fingerprint]);
    const plan = mergePlan(rows.rows);
    await c.query("DELETE FROM healer.tickets WHERE id = ANY($1::text[])", [plan.drop]);
    await c.query(
      "UPDATE healer.tickets SET occurrences = $1, created_at = $2, created_ms = $3, last_seen_at = $4, resolution_note = $5 WHERE id = $6",
      [plan.occurrences, plan.created_at, plan.created_ms, plan.last_seen_at, plan.resolution_note, plan.keep],
    );
  }
}
