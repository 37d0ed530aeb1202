import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ticket } from "../../src/healer/types.js";
import { launchChromium } from "../support/chromium.js";
import { FakeLlm } from "../support/fake-llm.js";
import { freePort } from "../support/net.js";
import { until } from "../support/poll.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { type DevRun, json, startDev } from "./support.js";

// The self-healing loop under `charter dev`, on the memory store and on PostgreSQL, with
// the fake OpenAI-compatible model as the Healer's provider.
const root = mkdtempSync(join(tmpdir(), "charter-loop-"));
let fake: FakeLlm;
let browser: Browser;

beforeAll(async () => {
  fake = await FakeLlm.start();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await fake?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Loop {
  dev: DevRun;
  dir: string;
  api: string;
  healer: string;
}

async function startLoop(name: string, env: Record<string, string>): Promise<Loop> {
  const dir = join(root, name);
  cpSync("examples/helpdesk", join(dir, "helpdesk"), { recursive: true });
  const api = await freePort();
  const healer = await freePort();
  const dev = startDev(
    ["helpdesk", "--port", String(api), "--healer-port", String(healer), "--no-frontend"],
    dir,
    fake.env({ OPENAI_API_KEY: "test-key", AUTH_ENABLED: "false", ...env }),
  );
  await dev.waitFor(/Watching helpdesk for changes/, 180_000);
  return { dev, dir, api: `http://127.0.0.1:${api}`, healer: `http://127.0.0.1:${healer}` };
}

async function stop(loop: Loop | undefined): Promise<void> {
  if (!loop || loop.dev.proc.exitCode !== null) return;
  loop.dev.proc.kill("SIGINT");
  await loop.dev.exited;
}

/** Approves a proposed ticket on its view page in Chromium and waits until dev serves the fix. */
async function approveInChromium(l: Loop, id: string): Promise<void> {
  const from = l.dev.output().length;
  const page = await browser.newPage();
  try {
    await page.goto(`${l.healer}/healer/tickets/${id}/view`);
    // A fix that changes a rule is listed under "What approving does": the reviewer confirms each.
    for (const box of await page.$$("#accept-risk input[name=accept_risk]")) await box.check();
    await page.click("#approve");
    await page.waitForURL(/done=applied/);
    await l.dev.waitFor(/backend live again/, 60_000, from);
    await l.dev.waitFor(/healer fix \S+ is live/, 30_000, from);
    await page.reload();
    expect(await page.textContent("#live")).toMatch(/live since \d{4}-/);
  } finally {
    await page.close();
  }
}

/**
 * The runtime ticket of `fqn` once the Healer has proposed a fix; if none comes within a minute,
 * the failure says what the loop did instead: its tickets, the fake model's queue, dev's output.
 */
async function proposedTicket(l: Loop, fqn: string): Promise<Ticket> {
  const tickets = async (): Promise<Ticket[]> => (await (await fetch(`${l.healer}/healer/tickets?contract_fqn=${fqn}`)).json()) as Ticket[];
  return until(
    async () => (await tickets()).find((t) => t.source === "runtime" && t.status === "proposed"),
    60_000,
    async () =>
      [
        `no proposed runtime ticket; tickets: ${JSON.stringify(await tickets().catch((e: unknown) => String(e)))}`,
        `fake LLM: ${fake.requests.length} request(s), ${fake.pending} reply(ies) still queued`,
        `charter dev said:\n${l.dev.output().slice(-4000)}`,
      ].join("\n"),
  );
}

const AGENT = join("helpdesk", "entities", "agent.contract.yaml");

const stores: [string, () => Record<string, string>][] = [
  ["memory", () => ({})],
  ["PostgreSQL", () => ({ DATABASE_URL: databaseUrl(freshDatabase("charter_dev_loop")) })],
];

describe.each(stores)("the loop under charter dev on %s", (store, env) => {
  let loop: Loop | undefined;
  let storeEnv: Record<string, string> = {};
  beforeAll(async () => {
    storeEnv = env();
    loop = await startLoop(store, storeEnv);
  }, 240_000);
  afterAll(() => stop(loop));

  it("(a) a CamelCase field saved in a contract is fixed by tier 1 and served; records survive the restart", async () => {
    const l = loop as Loop;
    const before = await json(`${l.api}/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Before", email: "before@example.com" }),
    });
    expect(before.status).toBe(201);
    const id = (before.body as { id: string }).id;

    const from = l.dev.output().length;
    const file = join(l.dir, AGENT);
    writeFileSync(file, readFileSync(file, "utf8").replace("  fields:\n", "  fields:\n    phoneNumber:\n      type: string\n"));
    await l.dev.waitFor(/the contracts do not validate/, 30_000, from);
    await l.dev.waitFor(/healer ticket \w{8} \(new\): fixed the contract/, 60_000, from);
    await l.dev.waitFor(/backend live again/, 60_000, from);
    const text = readFileSync(file, "utf8");
    expect(text).toContain("    phone_number:\n      type: string\n");
    expect(text).not.toContain("phoneNumber");

    const created = await json(`${l.api}/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "After", email: "after@example.com", phone_number: "+1 555 0100" }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ phone_number: "+1 555 0100" });
    // The record made before the restart is still there, the new field empty.
    const kept = await json(`${l.api}/agents/${id}`);
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ name: "Before", phone_number: null });
  }, 180_000);

  it.runIf(store === "memory")(
    "(b) a runtime error becomes a proposal; approving it in Chromium regenerates, restarts, and the request succeeds",
    async () => {
      const l = loop as Loop;
      // A rule that compares the text field `company` with a number: the validator lets it through,
      // Python refuses `str >= int`, so every enterprise create is a 500. The fix belongs to the
      // Route whose rule raised, and makes the very same request succeed.
      const routeFile = join(l.dir, "helpdesk", "routes", "customer_api.contract.yaml");
      const good = readFileSync(routeFile, "utf8");
      const mistyped = good.replace("plan != 'enterprise' or is_set(company)", "plan != 'enterprise' or company >= 3");
      expect(mistyped).not.toBe(good);
      const from = l.dev.output().length;
      writeFileSync(routeFile, mistyped);
      await l.dev.waitFor(/backend live again/, 60_000, from);
      fake.reply({
        json: {
          contract: good.replace("plan != 'enterprise' or is_set(company)", "plan != 'enterprise' or len(company) >= 3"),
          explanation: "The rule compares the company's name with a number; compare its length instead.",
        },
      });
      const body = JSON.stringify({ name: "Loop Corp", email: "corp@example.com", plan: "enterprise", company: "Acme" });
      const create = (): Promise<Response> =>
        fetch(`${l.api}/customers`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect((await create()).status).toBe(500);

      const ticket = await proposedTicket(l, "route/helpdesk/customer_api");
      await approveInChromium(l, ticket.id);
      expect(readFileSync(routeFile, "utf8")).toContain("len(company) >= 3");
      const again = await create();
      expect(again.status).toBe(201);
      expect(((await again.json()) as { company: string }).company).toBe("Acme");
    },
    180_000,
  );

  it.runIf(store === "PostgreSQL")(
    "(b) a runtime error becomes a proposal; approving it in Chromium regenerates, restarts, and the request succeeds",
    async () => {
      const l = loop as Loop;
      const db = /\/([^/]+)$/.exec(storeEnv.DATABASE_URL ?? "")?.[1];
      expect(db).toBeDefined();
      const customerFile = join(l.dir, "helpdesk", "entities", "customer.contract.yaml");
      const customer = readFileSync(customerFile, "utf8");
      // The database holds a rule the contract does not know: new customers may not be on the free
      // plan. The contract's default then makes every create without a plan fail with a 500; the
      // model's fix (a default the database accepts) makes the very same request succeed.
      fake.reply({
        json: {
          contract: customer.replace(/^(\s+)default: free$/m, "$1default: pro"),
          explanation: "The database refuses the free plan for new customers; default to pro instead.",
        },
      });
      const body = JSON.stringify({ name: "Loop Customer", email: "loop@example.com" });
      const create = (): Promise<Response> =>
        fetch(`${l.api}/customers`, { method: "POST", headers: { "content-type": "application/json" }, body });
      psql(String(db), "ALTER TABLE customers ADD CONSTRAINT customers_paid_plan CHECK (plan <> 'free');");
      expect((await create()).status).toBe(500);

      const ticket = await proposedTicket(l, "entity/helpdesk/customer");
      await approveInChromium(l, ticket.id);
      expect(readFileSync(customerFile, "utf8")).toMatch(/^\s+default: pro$/m);
      const again = await create();
      expect(again.status).toBe(201);
      expect(((await again.json()) as { plan: string }).plan).toBe("pro");
    },
    180_000,
  );
});
