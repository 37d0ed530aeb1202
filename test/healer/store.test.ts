import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { NewTicket, Priority } from "../../src/healer/index.js";
import { fingerprintOf, Healer, HealerError, normaliseMessage, TicketStore } from "../../src/healer/index.js";
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

/** A clock that advances one second per call, so created_at orders are unambiguous. */
function steppingClock(): () => Date {
  let t = Date.parse("2026-11-22T09:00:00Z");
  return () => {
    t += 1000;
    return new Date(t);
  };
}

describe("ticket store", () => {
  it("claims in queue order: priority critical, high, medium, low, then oldest first", () => {
    const store = new TicketStore(join(makeProject(), ".forge/healer/healer.db"), { now: steppingClock() });
    const order: [string, Priority][] = [
      ["low A", "low"],
      ["medium A", "medium"],
      ["critical A", "critical"],
      ["high A", "high"],
      ["medium B", "medium"],
      ["critical B", "critical"],
    ];
    for (const [m, p] of order) store.ingest(ticket(m, p));
    const claimed: string[] = [];
    for (let t = store.claimNext(); t; t = store.claimNext()) claimed.push(t.raw_error);
    expect(claimed).toEqual(["critical A", "critical B", "high A", "medium A", "medium B", "low A"]);
    store.close();
  });

  it("never hands one ticket to two claimers", () => {
    const db = join(makeProject(), ".forge/healer/healer.db");
    const a = new TicketStore(db);
    const b = new TicketStore(db);
    a.ingest(ticket("only one"));
    const first = a.claimNext();
    expect(first?.status).toBe("analyzing");
    expect(b.claimNext()).toBeNull();
    expect(b.claim(first?.id as string)).toBeNull();
    a.close();
    b.close();
  });

  it("finds a ticket by full id or a unique prefix of at least 4 characters", () => {
    const store = new TicketStore(join(makeProject(), ".forge/healer/healer.db"));
    const ids = Array.from({ length: 40 }, (_, i) => store.ingest(ticket(`error ${String.fromCharCode(97 + (i % 26))}${i}`)).ticket.id);
    const id = ids[7] as string;
    expect(store.resolve(id).id).toBe(id);
    expect(store.resolve(id.toUpperCase()).id).toBe(id);
    // A prefix long enough to be unique among 40 UUIDs.
    expect(store.resolve(id.slice(0, 13)).id).toBe(id);
    expect(() => store.resolve(id.slice(0, 3))).toThrow(/too short: give at least 4 characters/);
    expect(() => store.resolve("ffffffff-0000")).toThrow(/no ticket with id or prefix/);
    expect(() => store.resolve("not-an-id!")).toThrow(HealerError);
    store.close();
  });

  it("reports an ambiguous prefix with the candidates", () => {
    const store = new TicketStore(join(makeProject(), ".forge/healer/healer.db"));
    // Force two ids that share a prefix.
    store.ingest(ticket("one"));
    store.ingest(ticket("two"));
    store.db.prepare("UPDATE tickets SET id = 'abcd' || substr(id, 5)").run();
    const err = (() => {
      try {
        store.resolve("abcd");
      } catch (e) {
        return e as HealerError;
      }
      return null;
    })();
    expect(err?.code).toBe("ambiguous");
    expect(err?.message).toMatch(/ambiguous: it matches 2 tickets .*give more characters/);
    store.close();
  });

  it("folds 1,000 identical reports into one ticket with 1,000 occurrences", async () => {
    const root = makeProject();
    const healer = new Healer({ projectRoot: root, console: null, env: {} });
    for (let i = 0; i < 1000; i++) {
      healer.report({
        source: "runtime",
        contract_fqn: "entity/shop/order",
        // Ids and timestamps vary between occurrences of one storm; the fingerprint ignores them.
        error: `KeyError: 'priority' while reading order 3f0e8a52-1c1b-4e0e-9a55-${String(i).padStart(12, "0")} at 2026-11-22T10:00:${String(i % 60).padStart(2, "0")}Z`,
        context: { status_code: 500, request_path: `/orders/${i}`, method: "GET" },
      });
    }
    const all = healer.store.list();
    expect(all).toHaveLength(1);
    expect(all[0]?.occurrences).toBe(1000);
    expect(all[0]?.error_type).toBe("runtime_500");
    // One queued notification for the storm, not a thousand.
    expect(healer.notifier.sent.filter((n) => n.event === "queued")).toHaveLength(1);
    await healer.close();
  });

  it("keeps different problems apart and opens a new ticket once the old one is closed", () => {
    const store = new TicketStore(join(makeProject(), ".forge/healer/healer.db"));
    const a = store.ingest(ticket("'dueDate' does not match"));
    expect(store.ingest(ticket("'createdAt' does not match")).created).toBe(true);
    expect(store.ingest(ticket("'dueDate' does not match")).created).toBe(false);
    store.transition(a.ticket.id, "queued", "rejected", { resolution_note: "no" });
    const again = store.ingest(ticket("'dueDate' does not match"));
    expect(again.created).toBe(true);
    expect(again.ticket.id).not.toBe(a.ticket.id);
    store.close();
  });

  it("normalises volatile parts of a message only", () => {
    expect(normaliseMessage("order 42 failed at 2026-11-22T10:00:00Z id 3f0e8a52-1c1b-4e0e-9a55-000000000001")).toBe(
      "order <n> failed at <time> id <uuid>",
    );
    expect(normaliseMessage("'TKT1' does not match '^[A-Z]{2,6}$'")).toBe("'TKT1' does not match '^[A-Z]{2,6}$'");
  });

  it("keeps every field of every ticket across a restart", () => {
    const db = join(makeProject(), ".forge/healer/healer.db");
    const first = new TicketStore(db);
    const created = first.ingest({ ...ticket("persisted", "high"), context: { request_path: "/orders", status_code: 502 } }).ticket;
    first.ingest(ticket("persisted", "high"));
    const claimed = first.claimNext();
    first.transition(claimed?.id as string, "analyzing", "failed", { resolution_note: "diagnostic" });
    first.close();

    const second = new TicketStore(db);
    const back = second.get(created.id);
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
    second.close();
  });

  it("requeues a ticket whose claimer died, and leaves live claims alone", () => {
    const store = new TicketStore(join(makeProject(), ".forge/healer/healer.db"));
    const a = store.ingest(ticket("a")).ticket;
    const b = store.ingest(ticket("b")).ticket;
    store.claim(a.id);
    store.claim(b.id);
    store.db.prepare("UPDATE tickets SET claimed_by = ? WHERE id = ?").run("ghost-host-that-is-dead:1", a.id);
    const dead = (owner: string): boolean => !owner.startsWith("ghost-host-that-is-dead");
    expect(store.recoverStale(dead)).toEqual({ requeued: 1, released: 0 });
    expect(store.get(a.id)?.status).toBe("queued");
    expect(store.get(b.id)?.status).toBe("analyzing");
    store.close();
  });
});
