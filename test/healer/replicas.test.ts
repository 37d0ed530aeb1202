import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewTicket, Notification } from "../../src/healer/index.js";
import { fingerprintOf, PostgresTicketStore } from "../../src/healer/index.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { BASE_DOMAIN, makeProject, NO_PROVIDER_ENV } from "./helpers.js";
import { type HealerProcess, startHealerProcess } from "./serve-process.js";

/**
 * Two `charter healer serve` processes on one PostgreSQL store, each with its own project copy
 * (as two pods would have). What proves that no ticket was processed twice is written by the
 * processes themselves: the store's claim counter of every ticket (a claim is the start of
 * processing) and the `failed` notifications in each process's own notifications.jsonl.
 */

let db = "";
const started: HealerProcess[] = [];
beforeAll(() => {
  db = freshDatabase("charter_healer_replicas");
});
afterAll(async () => {
  for (const p of started) await p.stop();
});

function word(i: number): string {
  return String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26));
}

async function twoReplicas(): Promise<{ procs: HealerProcess[]; roots: string[] }> {
  const env = { ...NO_PROVIDER_ENV, HEALER_DATABASE_URL: databaseUrl(db) };
  const roots = [makeProject(BASE_DOMAIN), makeProject(BASE_DOMAIN)];
  const procs = await Promise.all(roots.map((r) => startHealerProcess(r, env, { quiet: true })));
  started.push(...procs);
  for (const p of procs) expect(p.output()).toMatch(/store: postgres postgresql:\/\/postgres@127\.0\.0\.1:5432\/\S+ \(shared/);
  return { procs, roots };
}

async function stopAll(procs: HealerProcess[]): Promise<void> {
  for (const p of procs) expect(await p.stop()).toBe(0);
}

function rows(sql: string): string[][] {
  return psql(db, sql, ["-t", "-A", "-F", "\t"])
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.split("\t"));
}

/** Every `failed` notification the two processes wrote, by ticket id. */
function failedNotifications(roots: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const root of roots) {
    let text = "";
    try {
      text = readFileSync(join(root, ".forge/healer/notifications.jsonl"), "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").filter(Boolean)) {
      const n = JSON.parse(line) as Notification;
      if (n.event === "failed") out.set(n.ticket_id, (out.get(n.ticket_id) ?? 0) + 1);
    }
  }
  return out;
}

async function waitForIdle(url: string): Promise<void> {
  for (;;) {
    const s = (await (await fetch(`${url}/healer/status`)).json()) as { queue: Record<string, number> };
    if (s.queue.queued === 0 && s.queue.analyzing === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("two Healer services on one PostgreSQL store", () => {
  it("200 concurrent ingests over HTTP: none lost, repeats folded across replicas, no ticket processed twice", async () => {
    psql(db, "DROP SCHEMA IF EXISTS healer CASCADE;");
    const { procs, roots } = await twoReplicas();
    const DISTINCT = 150;
    const REQUESTS = 200;
    // Reports 150..199 repeat 0..49, each sent to the other replica than the first one.
    const answers = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const target = procs[(i + Math.floor(i / DISTINCT)) % 2] as HealerProcess;
        const res = await fetch(`${target.url}/healer/ingest`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            source: "runtime",
            contract_fqn: "entity/shop/order",
            error: `KeyError: 'field_${word(i % DISTINCT)}'`,
            context: { status_code: 500, request_path: `/orders/${i}`, method: "GET" },
          }),
        });
        return { status: res.status, body: (await res.json()) as { ticket_id: string; created: boolean; status: string } };
      }),
    );
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    await Promise.all(procs.map((p) => waitForIdle(p.url)));

    const tickets = rows("SELECT id, status, occurrences, claims, COALESCE(claimed_by, '-') FROM healer.tickets ORDER BY seq");
    // None lost: one ticket per distinct report, every answer names one of them, every report counted.
    expect(tickets).toHaveLength(DISTINCT);
    const ids = new Set(tickets.map((t) => t[0]));
    expect(answers.every((a) => ids.has(a.body.ticket_id))).toBe(true);
    expect(answers.filter((a) => a.body.created)).toHaveLength(DISTINCT);
    expect(tickets.reduce((n, t) => n + Number(t[2]), 0)).toBe(REQUESTS);
    // Processed once each: one claim per ticket in the store, one `failed` notification in all the logs.
    expect(tickets.map((t) => t[3])).toEqual(Array(DISTINCT).fill("1"));
    expect(tickets.every((t) => t[1] === "failed" && t[4] === "-")).toBe(true);
    const failed = failedNotifications(roots);
    expect([...ids].map((id) => failed.get(id as string) ?? 0)).toEqual(Array(DISTINCT).fill(1));
    expect([...failed.keys()].every((id) => ids.has(id))).toBe(true);
    await stopAll(procs);
  }, 240_000);

  it("replicas starting together on a waiting queue process each ticket exactly once", async () => {
    psql(db, "DROP SCHEMA IF EXISTS healer CASCADE;");
    // A backlog filed while no Healer ran; both replicas start on it together.
    const store = new PostgresTicketStore(databaseUrl(db));
    const backlog: NewTicket[] = Array.from({ length: 120 }, (_, i) => {
      const message = `ValueError: bad value in ${word(i)}`;
      return {
        source: "runtime",
        contract_fqn: "entity/shop/order",
        error_type: "runtime_exception",
        raw_error: message,
        context: {},
        tier: 3,
        priority: "medium",
        fixable_by: "contract",
        fingerprint: fingerprintOf("entity/shop/order", "runtime_exception", message),
      };
    });
    await store.ingestMany(backlog);
    await store.close();
    const { procs, roots } = await twoReplicas();
    await Promise.all(procs.map((p) => waitForIdle(p.url)));
    const tickets = rows("SELECT id, status, claims FROM healer.tickets ORDER BY seq");
    expect(tickets).toHaveLength(120);
    expect(tickets.map((t) => `${t[1]} ${t[2]}`)).toEqual(Array(120).fill("failed 1"));
    const failed = failedNotifications(roots);
    expect(tickets.map((t) => failed.get(t[0] as string) ?? 0)).toEqual(Array(120).fill(1));
    await stopAll(procs);
  }, 240_000);
});
