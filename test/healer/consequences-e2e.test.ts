import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Notification, Ticket } from "../../src/healer/index.js";
import { consequenceLines, needsConfirmation, type RiskFinding } from "../../src/healer/proposal/risk.js";
import { type RunningBackend, startGeneratedBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { launchChromium } from "../support/chromium.js";
import { REPO_ROOT } from "../support/cli.js";
import { FakeLlm } from "../support/fake-llm.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { VENV_PYTHON } from "../support/python.js";
import { makeProject } from "./helpers.js";
import { type HealerProcess, startHealerProcess } from "./serve-process.js";

/*
 * Issue 39, items 1, 2 and 6: a real `charter healer serve` beside the generated helpdesk app on
 * PostgreSQL, told where the app's database is (SVC_HEALER_APP_DATABASE_URL). The fake model's
 * proposals are judged by the engine of `charter plan` before they are shown: a field removal
 * lists the dropped column with the rows counted in the app's table, first on the page (Chromium),
 * in the ticket's JSON, the webhook and notifications.jsonl alike; once approved, the column and
 * its data stay until `python -m app.migrate --allow-destructive`. A removed endpoint is a
 * breaking API change that needs its own confirmation.
 */

const ENV = { SVC_HEALER_LLM_CALLS_PER_MINUTE: "100", SVC_HEALER_LLM_CALLS_PER_ERROR: "100", HEALER_DATABASE_URL: "" };
const WITH_WEBSITE = 12;
const WITHOUT_WEBSITE = 3;

let fake: FakeLlm;
let browser: Browser;
let healer: HealerProcess;
let app: RunningBackend;
let root: string;
let db: string;
let hookServer: Server;
const hooks: Notification[] = [];

function rows(sql: string): string[] {
  return psql(db, sql, ["-At"]).trim().split("\n").filter(Boolean);
}
const websiteColumn = "SELECT column_name FROM information_schema.columns WHERE table_name = 'customers' AND column_name = 'website';";

async function eventually<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out; Healer log:\n${healer.output()}`);
}

beforeAll(async () => {
  fake = await FakeLlm.start();
  browser = await launchChromium();
  hookServer = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      hooks.push(JSON.parse(body) as Notification);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hookServer.listen(0, "127.0.0.1", r));
  const addr = hookServer.address();
  const hookUrl = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}/hook`;
  root = makeProject(join(REPO_ROOT, "examples", "helpdesk"), "helpdesk");
  db = freshDatabase("charter_healer_consequences");
  app = await startGeneratedBackend({
    domainDir: join(root, "domains", "helpdesk"),
    outDir: join(root, "runtime"),
    backend: "postgres",
    databaseUrl: databaseUrl(db),
    env: { AUTH_ENABLED: "false" },
  });
  healer = await startHealerProcess(root, {
    ...fake.env(),
    ...ENV,
    SVC_HEALER_APP_DATABASE_URL: databaseUrl(db),
    SVC_HEALER_WEBHOOK_URL: hookUrl,
    SVC_HEALER_WEBHOOK_FORMAT: "json",
  });
}, 600_000);

afterAll(async () => {
  await app?.stop();
  await healer?.stop();
  await browser?.close();
  await fake?.close();
  hookServer?.closeAllConnections();
  await new Promise((r) => hookServer?.close(r));
});

/** Files a runtime report on `path`; the fake answers with `contract`. */
async function propose(path: string, tag: string, contract: string, stacktrace?: string): Promise<Ticket> {
  fake.reset();
  fake.reply({ json: { contract, explanation: "A harmless tidy-up." } });
  const r = await fetch(`${healer.url}/healer/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      source: "runtime",
      error: `KeyError: '${tag}'`,
      ...(stacktrace ? { stacktrace } : {}),
      context: { status_code: 500, path, method: "POST" },
    }),
  });
  const body = (await r.json()) as { ticket_id: string; status: string };
  expect(body.status, healer.output()).toBe("proposed");
  return (await (await fetch(`${healer.url}/healer/tickets/${body.ticket_id}`)).json()) as Ticket;
}

const approve = (id: string, accept: string[]) =>
  fetch(`${healer.url}/healer/approve/${id}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ accept_risk: accept }),
  });

describe("proposals judged by the plan engine, on a real app and database", () => {
  it("a field removal shows the rows of the app's table first; approved, the column stays until the explicit command", async () => {
    for (let i = 0; i < WITH_WEBSITE + WITHOUT_WEBSITE; i++) {
      const body = {
        name: `Customer ${i}`,
        email: `c${i}@example.test`,
        ...(i < WITH_WEBSITE ? { website: `https://c${i}.example.test` } : {}),
      };
      const r = await fetch(`${app.url}/customers/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(r.status, await r.text()).toBe(201);
    }
    expect(rows("SELECT count(website) FROM customers;")).toEqual([String(WITH_WEBSITE)]);

    const file = join(root, "domains/helpdesk/entities/customer.contract.yaml");
    const customer = readFileSync(file, "utf8");
    const without = customer.replace("    website:\n      type: string\n      format: uri\n", "");
    expect(without).not.toBe(customer);
    const t = await propose("/customers/", "website_gone", without);
    const risk = t.proposal?.risk as RiskFinding[];
    const plan = t.proposal?.plan;
    // The plan: made against the generated app on disk, with the migration's destructive step
    // counted on the app's PostgreSQL table.
    expect(plan?.compared_with).toBe("runtime");
    expect(plan?.rows_unknown).toBeUndefined();
    const step = plan?.plan?.migration?.destructive[0];
    expect(step).toMatchObject({ table: "customers", column: "website", rows: WITH_WEBSITE });
    expect(plan?.plan?.migration?.file).toMatch(/^runtime\/backend\/db\/migrations\/0002_[a-z_]+\.sql$/);
    const changed = plan?.plan?.changed.map((f) => f.path) ?? [];
    expect(changed.length, JSON.stringify(plan?.plan)).toBeGreaterThan(0);
    for (const p of changed) expect(p).toMatch(/^backend\//);
    // Clients read `website` in every answer: its removal is breaking, and listed as such.
    expect(plan?.plan?.api?.breaking).toBe(true);
    expect(risk.find((f) => f.id === "api.response-required-property-removed#response property website removed")).toMatchObject({
      level: "breaks clients",
      message: expect.stringMatching(/^response property website removed in POST \/customers, .*\(breaking\)$/),
    });
    // The consequences: the plan's fact first (it carries the figure), the contract review's next.
    expect(risk[0]).toMatchObject({
      id: "migration.drop_column:customers.website",
      level: "destroys data",
      message: `drops column \`customers.website\` — ${WITH_WEBSITE} rows with a value`,
      file: plan?.plan?.migration?.file,
    });
    expect(risk.map((f) => f.id)).toContain("field.removed:/spec/fields/website");
    expect(risk.some((f) => f.id === "plan.files" && f.level === "info")).toBe(true);
    const levels = risk.map((f) => ["destroys data", "breaks clients", "weakens", "info"].indexOf(f.level));
    expect(levels).toEqual([...levels].sort((a, b) => a - b));

    // Chromium: the list leads the page, before the decision and the diff, with a box per finding.
    const page = await browser.newPage();
    try {
      await page.goto(`${healer.url}/healer/tickets/${t.id}/view`);
      const seen = await page.evaluate(() => {
        const c = document.querySelector("#consequences") as Node;
        const follows = (sel: string): boolean =>
          (c.compareDocumentPosition(document.querySelector(sel) as Node) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
        return {
          first: document.querySelector("#consequences li")?.textContent ?? "",
          beforeDecision: follows("#decision"),
          beforeDiff: follows("#diff"),
          boxes: [...document.querySelectorAll<HTMLInputElement>("#accept-risk input[name=accept_risk]")].map((b) => b.value),
          plan: document.querySelector("#plan")?.textContent ?? "",
        };
      });
      expect(seen.first).toContain(`destroys data: drops column \`customers.website\` — ${WITH_WEBSITE} rows with a value`);
      expect(seen).toMatchObject({ beforeDecision: true, beforeDiff: true, boxes: needsConfirmation(risk).map((f) => f.id) });
      expect(seen.boxes).toContain("migration.drop_column:customers.website");
      expect(seen.plan).toContain("1 destructive step(s)");
      expect(seen.plan).toContain("DROP COLUMN");
    } finally {
      await page.close();
    }

    // The webhook and notifications.jsonl carry the same list as the ticket.
    const lines = consequenceLines(risk);
    const hook = await eventually(() => hooks.find((n) => n.ticket_id === t.id && n.event === "proposed"));
    expect(hook.consequences).toEqual(lines);
    const jsonl = readFileSync(join(root, ".forge/healer/notifications.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Notification)
      .find((n) => n.ticket_id === t.id && n.event === "proposed");
    expect(jsonl?.consequences).toEqual(lines);
    expect(lines[0]).toContain(`drops column \`customers.website\` — ${WITH_WEBSITE} rows`);

    // Without the dropped column's confirmation: refused, naming it.
    const confirm = needsConfirmation(risk).map((f) => f.id);
    const refused = await approve(
      t.id,
      confirm.filter((id) => id !== "migration.drop_column:customers.website"),
    );
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toContain("migration.drop_column:customers.website");
    const ok = await approve(t.id, confirm);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(((await ok.json()) as { outcome: string }).outcome).toBe("applied");

    // Applied and regenerated: the migration is written, the column and its data are still there,
    // also after the app restarts with DATABASE_MIGRATE=auto.
    const migrations = readdirSync(join(root, "runtime/backend/db/migrations")).filter((f) => f.endsWith(".sql"));
    const drop = migrations.find((f) => f.startsWith("0002_")) as string;
    expect(readFileSync(join(root, "runtime/backend/db/migrations", drop), "utf8")).toMatch(/DROP COLUMN (IF EXISTS )?"?website"?/);
    expect(rows(websiteColumn)).toEqual(["website"]);
    await app.stop();
    app = await startGeneratedBackend({
      domainDir: join(root, "domains", "helpdesk"),
      outDir: join(root, "runtime"),
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      skipGenerate: true,
      anyHealth: true,
      env: { AUTH_ENABLED: "false", DATABASE_MIGRATE: "auto" },
    });
    expect(rows(websiteColumn)).toEqual(["website"]);
    expect(rows("SELECT count(website) FROM customers;")).toEqual([String(WITH_WEBSITE)]);
    await app.stop();
    const migrate = spawnSync(VENV_PYTHON, ["-m", "app.migrate", "--allow-destructive"], {
      cwd: join(root, "runtime/backend"),
      env: { ...process.env, DATABASE_BACKEND: "postgres", DATABASE_URL: databaseUrl(db), AUTH_SECRET: TEST_AUTH_SECRET },
      encoding: "utf8",
    });
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(rows(websiteColumn)).toEqual([]);
    expect(rows("SELECT count(*) FROM customers;")).toEqual([String(WITH_WEBSITE + WITHOUT_WEBSITE)]);
  }, 300_000);

  it("a field made required is a breaking API change that needs its own confirmation", async () => {
    // (Removing an endpoint would be the other example; in a Route with roles anywhere, the older
    // key-name guard refuses any endpoint list change before a plan is made.)
    const file = join(root, "domains/helpdesk/entities/customer.contract.yaml");
    const entity = readFileSync(file, "utf8");
    const required = entity.replace("    company:\n      type: string\n", "    company:\n      type: string\n      required: true\n");
    expect(required).not.toBe(entity);
    const t = await propose("/customers/", "company_required", required);
    const risk = t.proposal?.risk as RiskFinding[];
    const removed = risk.find((f) => f.id === "api.request-property-became-required#request property company became required");
    expect(removed, JSON.stringify(risk, null, 1)).toMatchObject({
      level: "breaks clients",
      message: expect.stringMatching(/^request property company became required in POST \/customers.* \(breaking\)$/),
    });
    expect(t.proposal?.plan?.plan?.api?.breaking).toBe(true);
    expect(t.proposal?.plan?.plan?.migration?.destructive).toEqual([]);
    const others = needsConfirmation(risk)
      .map((f) => f.id)
      .filter((id) => id !== removed?.id);
    const refused = await approve(t.id, others);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string; message: string }).message).toContain(removed?.id);
    const page = await browser.newPage();
    try {
      await page.goto(`${healer.url}/healer/tickets/${t.id}/view`);
      const boxes = await page.$$eval("#accept-risk input[name=accept_risk]", (els) => els.map((e) => (e as HTMLInputElement).value));
      expect(boxes).toContain(removed?.id);
    } finally {
      await page.close();
    }
    const rej = await fetch(`${healer.url}/healer/reject/${t.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(rej.status).toBe(200);
  }, 180_000);
});
