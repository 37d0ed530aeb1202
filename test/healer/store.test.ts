import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Clock, NewTicket, Priority, TicketStore } from "../../src/healer/index.js";
import {
  fingerprintOf,
  Healer,
  HealerError,
  normaliseMessage,
  openTicketStore,
  PostgresTicketStore,
  SqliteTicketStore,
} from "../../src/healer/index.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { makeProject } from "./helpers.js";

function ticket(message: string, priority: Priority = "medium", fqn = "entity/shop/order"): NewTicket {
  return {
    source: "runtime",
    contract_fqn: fqn,
    error_type: "runtime_exception",
    raw_error: message,
    context: { method: "GET" },
    tier: 3,
    priority,
    fixable_by: "contract",
    fingerprint: fingerprintOf(fqn, "runtime_exception", message),
  };
}

/** A distinct word per number: the fingerprint ignores digits, so distinct problems need letters. */
function word(i: number): string {
  return String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26));
}

/** A clock that advances one second per call, so created_at orders are unambiguous. */
function steppingClock(): () => Date {
  let t = Date.parse("2026-11-22T09:00:00Z");
  return () => {
    t += 1000;
    return new Date(t);
  };
}

/** One empty store location per test, on one backend; `open` may be called again for a second process's view. */
interface Place {
  open(options?: { now?: Clock }): TicketStore;
  /** Runs one SQL statement directly (unqualified table names: `tickets`, `locks`). */
  sql(statement: string): Promise<void>;
  /** The environment a Healer needs to use this place (empty for SQLite, which lives in the project). */
  env: Record<string, string>;
  root: string;
}

interface Backend {
  name: "sqlite" | "postgres";
  place(): Promise<Place>;
}

const opened: TicketStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
function track<T extends TicketStore>(s: T): T {
  opened.push(s);
  return s;
}

let pgDb = "";
beforeAll(() => {
  pgDb = freshDatabase("charter_healer_store");
});

const BACKENDS: Backend[] = [
  {
    name: "sqlite",
    place: async () => {
      const root = makeProject();
      const path = join(root, ".forge/healer/healer.db");
      let first: SqliteTicketStore | null = null;
      return {
        root,
        env: {},
        open: (options = {}) => {
          const s = track(new SqliteTicketStore(path, options));
          first ??= s;
          return s;
        },
        sql: async (statement) => {
          const s = first ?? track(new SqliteTicketStore(path));
          s.db.exec(statement);
        },
      };
    },
  },
  {
    name: "postgres",
    place: async () => {
      // Each test starts from an empty database: the store creates its schema on first use.
      psql(pgDb, "DROP SCHEMA IF EXISTS healer CASCADE;");
      const url = databaseUrl(pgDb);
      return {
        root: makeProject(),
        env: { HEALER_DATABASE_URL: url },
        open: (options = {}) => track(new PostgresTicketStore(url, options)),
        sql: async (statement) => void psql(pgDb, `SET search_path TO healer;\n${statement};`),
      };
    },
  },
];

describe.each(BACKENDS)("ticket store on $name", (backend) => {
  it("claims in queue order: priority critical, high, medium, low, then oldest first", async () => {
    const store = (await backend.place()).open({ now: steppingClock() });
    const order: [string, Priority][] = [
      ["low A", "low"],
      ["medium A", "medium"],
      ["critical A", "critical"],
      ["high A", "high"],
      ["medium B", "medium"],
      ["critical B", "critical"],
    ];
    for (const [m, p] of order) await store.ingest(ticket(m, p));
    const claimed: string[] = [];
    for (let t = await store.claimNext(); t; t = await store.claimNext()) claimed.push(t.raw_error);
    expect(claimed).toEqual(["critical A", "critical B", "high A", "medium A", "medium B", "low A"]);
  });

  it("never hands one ticket to two claimers", async () => {
    const place = await backend.place();
    const a = place.open();
    const b = place.open();
    await a.ingest(ticket("only one"));
    const first = await a.claimNext();
    expect(first?.status).toBe("analyzing");
    expect(await b.claimNext()).toBeNull();
    expect(await b.claim(first?.id as string)).toBeNull();
  });

  it("two stores claiming at once share the queue: every ticket claimed exactly once", async () => {
    const place = await backend.place();
    const a = place.open();
    const b = place.open();
    await a.ingestMany(Array.from({ length: 60 }, (_, i) => ticket(`shared ${word(i)}`)));
    const drain = async (s: TicketStore): Promise<string[]> => {
      const got: string[] = [];
      for (let t = await s.claimNext(); t; t = await s.claimNext()) got.push(t.id);
      return got;
    };
    const [fromA, fromB, fromA2, fromB2] = await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
    const all = [...fromA, ...fromB, ...fromA2, ...fromB2];
    expect(all).toHaveLength(60);
    expect(new Set(all).size).toBe(60);
    expect((await a.list({ status: "analyzing" })).length).toBe(60);
  });

  it("one report of the same error from two stores at once makes one ticket", async () => {
    const place = await backend.place();
    const a = place.open();
    const b = place.open();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).ingestMany([ticket("same storm"), ticket(`other ${word(i % 4)}`)])),
    );
    expect(results.flat().filter((r) => r.created)).toHaveLength(5);
    const all = await a.list();
    expect(all).toHaveLength(5);
    expect(all.find((t) => t.raw_error === "same storm")?.occurrences).toBe(40);
  });

  it("finds a ticket by full id or a unique prefix of at least 4 characters", async () => {
    const store = (await backend.place()).open();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await store.ingest(ticket(`error ${String.fromCharCode(97 + (i % 26))}${i}`))).ticket.id);
    const id = ids[7] as string;
    expect((await store.resolve(id)).id).toBe(id);
    expect((await store.resolve(id.toUpperCase())).id).toBe(id);
    // A prefix long enough to be unique among 40 UUIDs.
    expect((await store.resolve(id.slice(0, 13))).id).toBe(id);
    await expect(store.resolve(id.slice(0, 3))).rejects.toThrow(/too short: give at least 4 characters/);
    await expect(store.resolve("ffffffff-0000")).rejects.toThrow(/no ticket with id or prefix/);
    await expect(store.resolve("not-an-id!")).rejects.toThrow(HealerError);
  });

  it("reports an ambiguous prefix with the candidates", async () => {
    const place = await backend.place();
    const store = place.open();
    // Force two ids that share a prefix.
    await store.ingest(ticket("one"));
    await store.ingest(ticket("two"));
    await place.sql("UPDATE tickets SET id = 'abcd' || substr(id, 5)");
    const err = await store.resolve("abcd").then(
      () => null,
      (e: HealerError) => e,
    );
    expect(err?.code).toBe("ambiguous");
    expect(err?.message).toMatch(/ambiguous: it matches 2 tickets .*give more characters/);
  });

  it("folds 1,000 identical reports into one ticket with 1,000 occurrences", async () => {
    const place = await backend.place();
    const healer = new Healer({ projectRoot: place.root, console: null, env: place.env });
    expect(healer.store.backend).toBe(backend.name);
    for (let i = 0; i < 1000; i++) {
      await healer.report({
        source: "runtime",
        contract_fqn: "entity/shop/order",
        // Ids and timestamps vary between occurrences of one storm; the fingerprint ignores them.
        error: `KeyError: 'priority' while reading order 3f0e8a52-1c1b-4e0e-9a55-${String(i).padStart(12, "0")} at 2026-11-22T10:00:${String(i % 60).padStart(2, "0")}Z`,
        context: { status_code: 500, request_path: `/orders/${i}`, method: "GET" },
      });
    }
    const all = await healer.store.list();
    expect(all).toHaveLength(1);
    expect(all[0]?.occurrences).toBe(1000);
    expect(all[0]?.error_type).toBe("runtime_500");
    // One queued notification for the storm, not a thousand.
    expect(healer.notifier.sent.filter((n) => n.event === "queued")).toHaveLength(1);
    await healer.close();
  });

  it("keeps the failed request's id and trace id verbatim, the latest occurrence's, and drops malformed ones", async () => {
    const place = await backend.place();
    const healer = new Healer({ projectRoot: place.root, console: null, env: place.env });
    // Seven digits in a row: what redaction of the context would take for a value.
    const trace1 = "4bf92f3577b34da6a3ce9291234567a1";
    const trace2 = "0af7651916cd43dd8448eb211c80319c";
    const report = (context: Record<string, unknown>) =>
      healer.report({
        source: "runtime",
        contract_fqn: "entity/shop/order",
        error: "KeyError: 'priority'",
        context: { status_code: 500, ...context },
      });
    const first = await report({ request_id: "req-1", trace_id: trace1 });
    expect(first.ticket).toMatchObject({ request_id: "req-1", trace_id: trace1 });
    expect(first.ticket.context).not.toHaveProperty("request_id");
    await report({ request_id: "req-2", trace_id: trace2 });
    // A repeat without ids keeps the last ones; malformed ids are not stored.
    await report({ request_id: "bad id\n", trace_id: "not-hex" });
    const [t] = await healer.store.list();
    expect(t).toMatchObject({ occurrences: 3, request_id: "req-2", trace_id: trace2 });
    const reopened = place.open();
    expect(await reopened.get(t?.id ?? "")).toMatchObject({ request_id: "req-2", trace_id: trace2 });
    await healer.close();
  });

  it("keeps different problems apart, and one ticket per error whatever its state", async () => {
    const store = (await backend.place()).open();
    const a = await store.ingest(ticket("'dueDate' does not match"));
    expect((await store.ingest(ticket("'createdAt' does not match"))).created).toBe(true);
    expect((await store.ingest(ticket("'dueDate' does not match"))).created).toBe(false);
    await store.transition(a.ticket.id, "queued", "rejected", { resolution_note: "no" });
    // A rejected ticket stays rejected: the repeat is one more occurrence of it.
    const again = await store.ingest(ticket("'dueDate' does not match"));
    expect(again).toEqual({ created: false, ticket: expect.objectContaining({ id: a.ticket.id, status: "rejected", occurrences: 3 }) });
    expect(await store.list()).toHaveLength(2);
  });

  it("asks again about a failed ticket only when the model, its settings or the contracts changed", async () => {
    const store = (await backend.place()).open();
    const keys = { attempt_model: "m1", attempt_contracts: "c1" };
    const first = await store.ingest({ ...ticket("no provider"), ...keys });
    await store.claim(first.ticket.id);
    await store.transition(first.ticket.id, "analyzing", "failed", { resolution_note: "no proposal: nonsense", ...keys });
    const repeat = await store.ingest({ ...ticket("no provider"), ...keys });
    expect(repeat).toEqual({ created: false, ticket: expect.objectContaining({ id: first.ticket.id, occurrences: 2, status: "failed" }) });
    const newModel = await store.ingest({ ...ticket("no provider"), attempt_model: "m2", attempt_contracts: "c1" });
    expect(newModel.reopened).toBe("retry");
    expect(newModel.ticket).toMatchObject({ id: first.ticket.id, occurrences: 3, status: "queued", resolved_at: null });
    expect(newModel.ticket.resolution_note).toMatch(
      /^retried: the model or its settings changed since the failed attempt \(no proposal: nonsense\)/,
    );
    // The queued ticket takes further repeats without reopening anything.
    expect((await store.ingest({ ...ticket("no provider"), attempt_model: "m3", attempt_contracts: "c1" })).reopened).toBeUndefined();
    await store.claim(first.ticket.id);
    await store.transition(first.ticket.id, "analyzing", "failed", {
      resolution_note: "still nonsense",
      attempt_model: "m2",
      attempt_contracts: "c1",
    });
    const newContracts = await store.ingest({ ...ticket("no provider"), attempt_model: "m2", attempt_contracts: "c2" });
    expect(newContracts).toMatchObject({ created: false, reopened: "retry", ticket: { status: "queued", occurrences: 5 } });
    expect(newContracts.ticket.resolution_note).toMatch(/^retried: the contracts changed/);
    expect(await store.list()).toHaveLength(1);
  });

  it("reopens a fixed ticket whose error comes back as a regression", async () => {
    const store = (await backend.place()).open();
    const first = await store.ingest(ticket("KeyError: 'priority'"));
    await store.claim(first.ticket.id);
    await store.transition(first.ticket.id, "analyzing", "applied", { resolution_note: "applied 1 change(s)", diff_id: "d-1" });
    const back = await store.ingest(ticket("KeyError: 'priority'"));
    expect(back).toMatchObject({ created: false, reopened: "regression" });
    expect(back.ticket).toMatchObject({ id: first.ticket.id, status: "queued", occurrences: 2, proposal: null, resolved_at: null });
    expect(back.ticket.regressed_at).toBe(back.ticket.last_seen_at);
    expect(back.ticket.resolution_note).toBe("regression: the error came back after its fix was applied (diff d-1)");
    // An error a later scan found gone (fixed by hand) that comes back is a regression too.
    const other = await store.ingest(ticket("'dueDate' does not match"));
    await store.transition(other.ticket.id, "queued", "rejected", {
      resolution_note: "obsolete: a later scan no longer reports this error",
    });
    expect((await store.ingest(ticket("'dueDate' does not match"))).reopened).toBe("regression");
  });

  it("merges the tickets of one error an older store holds into one, keeping every occurrence", async () => {
    const place = await backend.place();
    const store = place.open();
    await store.open();
    const fp = fingerprintOf("entity/shop/order", "runtime_exception", "dup");
    const row = (id: string, status: string, occurrences: number, second: number) =>
      `('${id}', 'runtime', 'entity/shop/order', 'runtime_exception', 'dup', '${status}', '${fp}', ${occurrences},
        '2026-11-22T09:00:0${second}+00:00', ${1_700_000_000_000 + second}, '2026-11-22T09:00:0${second}+00:00', '2026-11-22T09:00:0${second}+00:00', 'note ${id}')`;
    // As Charter wrote it before the unique index: a failed ticket, then 3 more opened after it, one still open.
    await place.sql(`DROP INDEX tickets_fingerprint_unique;
      INSERT INTO tickets (id, source, contract_fqn, error_type, raw_error, status, fingerprint, occurrences, created_at, created_ms,
        updated_at, last_seen_at, resolution_note)
      VALUES ${[row("aaaa0001", "failed", 5, 1), row("aaaa0002", "failed", 1, 2), row("aaaa0003", "queued", 2, 3), row("aaaa0004", "applied", 1, 4)].join(", ")}`);
    await store.close();
    const reopened = place.open();
    await reopened.open();
    const all = await reopened.list();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: "aaaa0003", status: "queued", occurrences: 9, created_at: "2026-11-22T09:00:01+00:00" });
    expect(all[0]?.last_seen_at).toBe("2026-11-22T09:00:04+00:00");
    expect(all[0]?.resolution_note).toContain("merged 3 earlier ticket(s) of this error: aaaa0001 (failed, 5)");
    // The unique index holds from now on.
    expect((await reopened.ingest(ticket("dup"))).ticket).toMatchObject({ id: "aaaa0003", occurrences: 10 });
  });

  it("normalises volatile parts of a message only", () => {
    expect(normaliseMessage("order 42 failed at 2026-11-22T10:00:00Z id 3f0e8a52-1c1b-4e0e-9a55-000000000001")).toBe(
      "order <n> failed at <time> id <uuid>",
    );
    expect(normaliseMessage("'TKT1' does not match '^[A-Z]{2,6}$'")).toBe("'TKT1' does not match '^[A-Z]{2,6}$'");
  });

  it("keeps every field of every ticket across a restart", async () => {
    const place = await backend.place();
    const first = place.open();
    const created = (await first.ingest({ ...ticket("persisted", "high"), context: { request_path: "/orders", status_code: 502 } })).ticket;
    await first.ingest(ticket("persisted", "high"));
    const claimed = await first.claimNext();
    await first.transition(claimed?.id as string, "analyzing", "failed", { resolution_note: "diagnostic" });
    await first.close();

    const second = place.open();
    const back = await second.get(created.id);
    expect(back).toMatchObject({
      id: created.id,
      source: "runtime",
      contract_fqn: "entity/shop/order",
      error_type: "runtime_exception",
      raw_error: "persisted",
      context: { request_path: "/orders", status_code: 502 },
      status: "failed",
      tier: 3,
      priority: "high",
      priority_order: 1,
      fixable_by: "contract",
      proposal: null,
      created_at: created.created_at,
      resolution_note: "diagnostic",
      occurrences: 2,
    });
    expect(back?.resolved_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/);
  });

  it("requeues a ticket whose claimer died, and leaves live claims alone", async () => {
    const place = await backend.place();
    const store = place.open();
    const a = (await store.ingest(ticket("a"))).ticket;
    const b = (await store.ingest(ticket("b"))).ticket;
    await store.claim(a.id);
    await store.claim(b.id);
    await place.sql(`UPDATE tickets SET claimed_by = 'ghost-host-that-is-dead:1' WHERE id = '${a.id}'`);
    const dead = (owner: string): boolean => !owner.startsWith("ghost-host-that-is-dead");
    expect(await store.recoverStale(dead)).toEqual({ requeued: 1, released: 0 });
    expect((await store.get(a.id))?.status).toBe("queued");
    expect((await store.get(b.id))?.status).toBe("analyzing");
  });

  it("a named lock has one holder at a time and is released by unlock", async () => {
    const place = await backend.place();
    const a = place.open();
    const b = place.open();
    // A holder of another host that is alive (SQLite's owner is the process, so only another owner excludes).
    const otherAlive = (owner: string): boolean => owner.length > 0;
    expect(await a.tryLock("apply", otherAlive)).toBe(true);
    if (backend.name === "postgres") {
      // Two stores of one process are two holders on PostgreSQL (their leases are per store instance).
      expect(await b.tryLock("apply", otherAlive)).toBe(false);
    }
    await a.unlock("apply");
    expect(await b.tryLock("apply", otherAlive)).toBe(true);
    await place.sql("UPDATE locks SET owner = 'ghost-host-that-is-dead:1'");
    expect(await a.tryLock("apply", (owner) => !owner.startsWith("ghost-host-that-is-dead"))).toBe(true);
  });

  it("sums the monitor's figures the same way", async () => {
    const store = (await backend.place()).open();
    for (const m of ["x", "y", "z"]) await store.ingest(ticket(m));
    await store.ingest(ticket("x"));
    const [x, y] = await store.list();
    await store.transition(x?.id as string, "queued", "rejected", { resolution_note: "no" });
    await store.claim(y?.id as string);
    await store.transition(y?.id as string, "analyzing", "applied", { resolution_note: "ok" });
    const o = await store.outcomes({ recurring: 10, recent: 10 });
    expect(o.rates).toEqual([{ tier: 3, ok: 1, n: 2 }]);
    expect(o.recurring).toEqual([{ contract_fqn: "entity/shop/order", error_type: "runtime_exception", count: 4 }]);
    expect(o.recent.map((r) => r.status).sort()).toEqual(["applied", "rejected"]);
    expect(await store.countByStatus()).toEqual({ queued: 1, analyzing: 0, proposed: 0, approved: 0, applied: 1, failed: 0, rejected: 1 });
  });
});

describe("ticket store on PostgreSQL only", () => {
  const pg = BACKENDS[1] as Backend;

  it("takes back the claims of a replica whose lease ran out, wherever it ran", async () => {
    const place = await pg.place();
    const replicaA = place.open();
    const replicaB = place.open();
    const t = (await replicaA.ingest(ticket("held by a dead replica"))).ticket;
    await replicaA.claim(t.id);
    // Replica A stops renewing (killed on another machine): its owner looks alive from here, its lease ends.
    await place.sql(`UPDATE tickets SET claimed_by = 'other-machine:1', lease_until = now() - interval '1 second' WHERE id = '${t.id}'`);
    expect(await replicaB.recoverStale()).toEqual({ requeued: 1, released: 0 });
    const again = await replicaB.claimNext();
    expect(again?.id).toBe(t.id);
    // A live lease is left alone.
    expect(await replicaA.recoverStale()).toEqual({ requeued: 0, released: 0 });
    const claims = psql(pgDb, `SELECT claims FROM healer.tickets WHERE id = '${t.id}'`, ["-t", "-A"]).trim();
    expect(claims).toBe("2");
  });

  it("creates its schema once when many replicas start together, and opens it again idempotently", async () => {
    const place = await pg.place();
    const stores = Array.from({ length: 6 }, () => place.open());
    await Promise.all(stores.map((s) => s.open()));
    await Promise.all(stores.map((s, i) => s.ingest(ticket(`start ${word(i)}`))));
    expect(await (stores[0] as TicketStore).list()).toHaveLength(6);
    const version = psql(pgDb, "SELECT value FROM healer.meta WHERE key = 'schema_version'", ["-t", "-A"]).trim();
    expect(version).toBe("3");
    await place.open().open();
  });

  it("refuses a store written by a newer Charter, naming the location without the password", async () => {
    const place = await pg.place();
    await place.open().open();
    await place.sql("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    const url = databaseUrl(pgDb).replace("postgres@", "postgres:secret@");
    const s = track(new PostgresTicketStore(url));
    await expect(s.open()).rejects.toThrow(/newer Charter \(store version 99\); upgrade Charter/);
    await expect(s.open()).rejects.toThrow(/postgres:\*\*\*@/);
  });

  it("is chosen by HEALER_DATABASE_URL, and a URL of another kind is refused", () => {
    const root = makeProject();
    const chosen = track(openTicketStore({ sqlitePath: join(root, "x.db"), databaseUrl: databaseUrl(pgDb) }));
    expect(chosen.backend).toBe("postgres");
    expect(chosen.shared).toBe(true);
    expect(() => openTicketStore({ sqlitePath: join(root, "x.db"), databaseUrl: "mysql://u:pw@h/db" })).toThrow(
      /HEALER_DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL \(got "mysql:\/\/u:\*\*\*@h\/db"\)/,
    );
    expect(track(openTicketStore({ sqlitePath: join(root, "x.db"), databaseUrl: " " })).backend).toBe("sqlite");
  });
});
