import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { generateNextjs } from "../../src/generators/nextjs/index.js";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { launchChromium } from "../support/chromium.js";
import { FakeLlm } from "../support/fake-llm.js";
import { freePort } from "../support/net.js";
import { until } from "../support/poll.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { buildNextApp, prepareNextApp, startNextApp } from "./support/next-app.mjs";

/*
 * The agent runs of a ticket on its detail page: the generated helpdesk (backend on PostgreSQL,
 * triage agent answered by the fake LLM), the frontend built with `next build`, headless Chromium.
 */

const REPO = resolve(import.meta.dirname, "../..");
const HELPDESK = join(REPO, "examples/helpdesk");
const SHOTS = join(REPO, "test-output/frontend");
const log = (line: string) => process.stderr.write(`[agent runs page] ${line}\n`);

type Rec = { id: string } & Record<string, unknown>;

describe("agent runs on the ticket detail page", () => {
  let backend: RunningBackend;
  let fake: FakeLlm;
  let web: { url: string; stop: () => Promise<void>; logs: () => string };
  let browser: Browser;
  let token = "";
  const outDir = mkdtempSync(join(tmpdir(), "charter-agent-runs-page-"));

  async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await fetch(`${backend.url}${path}`, {
      method,
      headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  const finished = (id: string) =>
    until(async () => {
      const { items } = await api<{ items: { decision: string }[] }>("GET", `/tickets/${id}/agent-runs`);
      return items.some((r) => r.decision !== "running") ? items : undefined;
    });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    fake = await FakeLlm.start();
    backend = await startGeneratedBackend({
      domainDir: HELPDESK,
      outDir,
      backend: "postgres",
      databaseUrl: databaseUrl(freshDatabase("charter_agent_runs_page")),
      env: fake.env({ DISPATCH_POLL_SECONDS: "0.2" }),
    });
    const { ir } = checkDomain(HELPDESK);
    if (!ir) throw new Error("the helpdesk example does not compile");
    const { appDir } = prepareNextApp(generateNextjs(ir), { log });
    buildNextApp(appDir, { apiUrl: backend.url, log });
    web = await startNextApp(appDir, await freePort());
    browser = await launchChromium();
    token = (await api<{ access_token: string }>("POST", "/auth/login", { email: "admin@example.com", password: "admin-password" }))
      .access_token;
  });

  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    await backend?.stop();
    await fake?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  it("shows the applied run with its changes, and a fallback with its reason", async () => {
    const customer = await api<Rec>("POST", "/customers/", { name: "Initech", email: "it@initech.example.com" });
    fake.reply({ json: { updates: { priority: "high", type: "incident", title: "nope" }, confidence: 0.93, reason: "Payments fail" } });
    const applied = await api<Rec>("POST", "/tickets/", { title: "Payments fail at checkout", customer_id: customer.id });
    await finished(applied.id);
    fake.reply({ content: "no idea, sorry" });
    const fallback = await api<Rec>("POST", "/tickets/", { title: "Something odd", customer_id: customer.id });
    await finished(fallback.id);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name: "charter_token", value: token, url: web.url }]);
    const page = await context.newPage();
    try {
      await page.goto(`${web.url}/tickets/${applied.id}`);
      const runs = page.getByTestId("agent-runs");
      await runs.getByTestId("agent-run").first().waitFor();
      const run = runs.getByTestId("agent-run");
      await expect(run.count()).resolves.toBe(1);
      await expect(run.getAttribute("data-decision")).resolves.toBe("applied");
      const text = (await run.textContent()) ?? "";
      expect(text).toContain("triage_agent");
      expect(text).toContain("on ticket_created");
      expect(text).toContain("confidence 0.93");
      expect(text).toContain("priority = high");
      expect(text).toContain("type = incident");
      expect(text).toContain("Ignored (not allowed): title");
      expect(text).toContain("Payments fail");
      // The record itself shows the agent's change.
      await expect(page.getByText("High", { exact: true }).first().isVisible()).resolves.toBe(true);
      await page.screenshot({ path: join(SHOTS, "agent-runs-applied.png"), fullPage: true });

      await page.goto(`${web.url}/tickets/${fallback.id}`);
      const other = page.getByTestId("agent-runs").getByTestId("agent-run");
      await other.first().waitFor();
      await expect(other.getAttribute("data-decision")).resolves.toBe("fallback");
      expect(await other.textContent()).toContain('the reply is not {"updates"');
    } finally {
      await context.close();
    }
  });
});
