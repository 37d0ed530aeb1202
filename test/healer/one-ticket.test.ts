import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Notification, Ticket } from "../../src/healer/index.js";
import { type FakeLlm, useFakeLlm } from "../support/fake-llm.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { BASE_DOMAIN, makeProject, runCharterAsync } from "./helpers.js";
import { call, json } from "./raw-http.js";
import { type HealerProcess, startHealerProcess } from "./serve-process.js";

/**
 * Issue 39 item 4, against a real `charter healer serve` on SQLite and on PostgreSQL: one ticket per
 * error whatever its state. The model calls are counted where they land, on the fake LLM server.
 */

const ORDER = "domains/shop/entities/order.contract.yaml";
const llm = useFakeLlm();
/** The budget is not what these tests are about (budget.test.ts is); it must not hide a model call. */
const ROOMY_BUDGET = { SVC_HEALER_LLM_CALLS_PER_MINUTE: "1000", SVC_HEALER_LLM_CALLS_PER_ERROR: "1000" };
/** The LLM proposer tries twice (a full prompt, then a simpler one) before it gives up. */
const NONSENSE = [{ content: "I am not sure what you mean." }, { content: "Still not JSON." }] as const;

const report = (error: string) => ({ source: "runtime", error, context: { path: "/orders", status_code: 500, method: "GET" } });

describe.each(["sqlite", "postgres"] as const)("one ticket per error (%s store)", (backend) => {
  let root: string;
  let fake: FakeLlm;
  let proc: HealerProcess;
  let storeEnv: Record<string, string>;

  const start = async (extra: Record<string, string> = {}): Promise<void> => {
    proc = await startHealerProcess(root, { ...fake.env(), ...ROOMY_BUDGET, SVC_HEALER_TOKEN: "", ...storeEnv, ...extra });
  };
  const ingest = async (error: string) => {
    const r = await call(proc.url, "POST", "/healer/ingest", json(report(error)));
    expect(r.status, r.text).toBe(200);
    return r.json() as { ticket_id: string; status: string; created: boolean; occurrences: number };
  };
  const ticket = async (id: string): Promise<Ticket> => (await call(proc.url, "GET", `/healer/tickets/${id}`)).json() as unknown as Ticket;
  const ticketsOf = async (error: string): Promise<Ticket[]> => {
    const all = (await call(proc.url, "GET", "/healer/tickets")).json() as unknown as Ticket[];
    return all.filter((t) => t.raw_error === error);
  };
  /** A proposal the checks accept: the order contract with a longer description. */
  const proposal = (words: string) => {
    const order = readFileSync(join(root, ORDER), "utf8");
    return {
      json: { contract: order.replace("description: A customer order", `description: A customer order, ${words}`), explanation: words },
    };
  };
  const failedTicket = async (error: string): Promise<string> => {
    fake.reply(...NONSENSE);
    const first = await ingest(error);
    expect(first).toMatchObject({ created: true, status: "failed" });
    return first.ticket_id;
  };

  beforeAll(async () => {
    fake = llm();
    root = makeProject(BASE_DOMAIN);
    storeEnv =
      backend === "postgres"
        ? { HEALER_DATABASE_URL: databaseUrl(freshDatabase("charter_healer_one_ticket")) }
        : { HEALER_DATABASE_URL: "" };
    await start();
  });
  afterAll(async () => {
    await proc?.stop();
  });

  it("a report sent again with its report_id after a lost answer is counted once; a bad id is a 400", async () => {
    const error = "KeyError: 'sent_twice'";
    fake.reply(...NONSENSE);
    const send = async (reportId: string) => {
      const r = await call(proc.url, "POST", "/healer/ingest", json({ ...report(error), report_id: reportId }));
      expect(r.status, r.text).toBe(200);
      return r.json() as { ticket_id: string; created: boolean; occurrences: number; repeated?: boolean };
    };
    const first = await send("a1b2c3d4e5f60718");
    expect(first).toMatchObject({ created: true, occurrences: 1 });
    expect(first.repeated).toBeUndefined();
    // The generated app's retry of a report whose answer timed out: the same id, concurrently too.
    const again = await Promise.all(Array.from({ length: 5 }, () => send("a1b2c3d4e5f60718")));
    expect(again.every((a) => a.ticket_id === first.ticket_id && a.repeated === true && !a.created)).toBe(true);
    expect((await ticket(first.ticket_id)).occurrences).toBe(1);
    // Another report of the same error is another occurrence.
    expect(await send("ffeeddccbbaa9988")).toMatchObject({ ticket_id: first.ticket_id, occurrences: 2 });
    expect((await ticket(first.ticket_id)).occurrences).toBe(2);
    for (const bad of ["short", "has space 1234567", "x".repeat(65), "-leadingdash123"]) {
      const r = await call(proc.url, "POST", "/healer/ingest", json({ ...report(error), report_id: bad }));
      expect(r.status, bad).toBe(400);
      expect(r.text).toMatch(/report_id/);
    }
    expect((await ticket(first.ticket_id)).occurrences).toBe(2);
  });

  it("after a failure, 100 concurrent identical reports give 1 ticket with 101 occurrences and no model call", async () => {
    const error = "KeyError: 'flavour'";
    const id = await failedTicket(error);
    expect(fake.requests).toHaveLength(2);
    const answers = await Promise.all(Array.from({ length: 100 }, () => ingest(error)));
    expect(new Set(answers.map((a) => a.ticket_id))).toEqual(new Set([id]));
    expect(answers.filter((a) => a.created)).toEqual([]);
    expect(answers.every((a) => a.status === "failed")).toBe(true);
    const tickets = await ticketsOf(error);
    expect(tickets).toHaveLength(1);
    expect(tickets[0]).toMatchObject({ id, status: "failed", occurrences: 101 });
    expect(fake.requests).toHaveLength(2);
  }, 120_000);

  it("a changed contract makes the next occurrence ask again, once", async () => {
    const error = "KeyError: 'colour'";
    const id = await failedTicket(error);
    const calls = fake.requests.length;
    // Someone edits a contract (not the Healer): the model now sees another domain.
    const file = join(root, "domains/shop/entities/customer.contract.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace(/description: (.*)/, "description: $1 (edited)"));
    // Reports read the domain as it was up to a second ago.
    await new Promise((r) => setTimeout(r, 1100));
    fake.reply(proposal("with a colour"));
    const retried = await ingest(error);
    expect(retried).toMatchObject({ ticket_id: id, created: false, status: "proposed", occurrences: 2 });
    expect(fake.requests).toHaveLength(calls + 1);
    // Further repeats add to the proposed ticket and ask nothing.
    expect(await ingest(error)).toMatchObject({ ticket_id: id, status: "proposed", occurrences: 3 });
    expect(fake.requests).toHaveLength(calls + 1);
    expect(await ticketsOf(error)).toHaveLength(1);
  }, 60_000);

  it("the owner's retry asks again: over HTTP, by the page's button and with `charter healer retry`", async () => {
    const error = "KeyError: 'size'";
    const id = await failedTicket(error);
    const calls = fake.requests.length;
    // The button is on the page of a failed ticket.
    const page = (await call(proc.url, "GET", `/healer/tickets/${id}/view`)).text;
    expect(page).toContain(`action="/healer/retry/${id}/action"`);
    // The JSON route is a write like approve: refused from a foreign origin.
    const cross = await call(proc.url, "POST", `/healer/retry/${id}`, json({}, { origin: "http://evil.example" }));
    expect(cross.status).toBe(403);
    expect(fake.requests).toHaveLength(calls);
    fake.reply(...NONSENSE);
    const http = await call(proc.url, "POST", `/healer/retry/${id}`, json({}));
    expect(http.status, http.text).toBe(200);
    expect(http.json()).toMatchObject({ ticket_id: id, status: "failed" });
    expect(fake.requests).toHaveLength(calls + 2);
    // The form, as the page posts it.
    fake.reply(...NONSENSE);
    const origin = proc.url;
    const form = await call(proc.url, "POST", `/healer/retry/${id}/action`, {
      headers: { "content-type": "application/x-www-form-urlencoded", origin },
      body: "",
    });
    expect(form.status).toBe(303);
    expect(form.headers.location).toBe(`/healer/tickets/${id}/view?done=retried-failed`);
    expect(fake.requests).toHaveLength(calls + 4);
    // The command line, on the same store, with the same model settings.
    fake.reply(proposal("with a size"));
    const cli = await runCharterAsync(["healer", "retry", id.slice(0, 8), "--project", root], {
      cwd: root,
      env: { ...fake.env(), ...ROOMY_BUDGET, ...storeEnv },
    });
    expect(cli.status, cli.stderr + cli.stdout).toBe(0);
    expect(cli.stdout).toMatch(new RegExp(`ticket ${id.slice(0, 8)}: proposed`));
    expect(fake.requests).toHaveLength(calls + 5);
    expect(await ticket(id)).toMatchObject({ status: "proposed", occurrences: 1 });
    expect(await ticketsOf(error)).toHaveLength(1);
  }, 90_000);

  it("an applied ticket whose error comes back is reopened as a regression", async () => {
    const error = "KeyError: 'weight'";
    fake.reply(proposal("with a weight"));
    const first = await ingest(error);
    expect(first).toMatchObject({ created: true, status: "proposed" });
    const approved = await call(proc.url, "POST", `/healer/approve/${first.ticket_id}`, json({}));
    expect(approved.status, approved.text).toBe(200);
    expect(approved.json()).toMatchObject({ outcome: "applied" });
    const calls = fake.requests.length;
    fake.reply(proposal("with a weight, again"));
    const back = await ingest(error);
    expect(back).toMatchObject({ ticket_id: first.ticket_id, created: false, status: "proposed", occurrences: 2 });
    expect(fake.requests).toHaveLength(calls + 1);
    const t = await ticket(first.ticket_id);
    expect(t.regressed_at).toEqual(expect.any(String));
    expect(t.diff_id).toEqual(expect.any(String));
    expect(await ticketsOf(error)).toHaveLength(1);
    // The notification of the reopening says why; the page says it too.
    const lines = readFileSync(join(root, ".forge/healer/notifications.jsonl"), "utf8").trim().split("\n");
    const queued = lines.map((l) => JSON.parse(l) as Notification).filter((n) => n.ticket_id === t.id && n.event === "queued");
    expect(queued.map((n) => n.message)).toEqual([
      expect.not.stringMatching(/^regression/),
      expect.stringMatching(/^regression: the error came back after its fix was applied \(diff /),
    ]);
    expect((await call(proc.url, "GET", `/healer/tickets/${t.id}/view`)).text).toContain('id="regression"');
  }, 90_000);

  it("a changed model setting makes the next occurrence ask again", async () => {
    const error = "KeyError: 'shape'";
    const id = await failedTicket(error);
    await proc.stop();
    // The same provider and model, another setting: its answers may differ now.
    await start({ SVC_AI_TIMEOUT: "45" });
    const calls = fake.requests.length;
    fake.reply(...NONSENSE);
    expect(await ingest(error)).toMatchObject({ ticket_id: id, created: false, status: "failed", occurrences: 2 });
    expect(fake.requests).toHaveLength(calls + 2);
    const note = (await ticket(id)).resolution_note;
    expect(note).toMatch(/^no proposal: /);
    // Asked under these settings: the next repeat asks nothing.
    expect(await ingest(error)).toMatchObject({ ticket_id: id, status: "failed", occurrences: 3 });
    expect(fake.requests).toHaveLength(calls + 2);
  }, 90_000);
});
