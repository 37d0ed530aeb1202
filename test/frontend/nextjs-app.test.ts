import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { generateNextjs } from "../../src/generators/nextjs/index.js";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { freePort } from "../support/net.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { buildNextApp, firstLoadJs, formatSizes, prepareNextApp, startNextApp } from "./support/next-app.mjs";

/*
 * The generated helpdesk frontend, built with `next build` and driven in headless Chromium against
 * the generated FastAPI backend on PostgreSQL (auth on, as the helpdesk's auth contract asks).
 * One build serves every step: NEXT_PUBLIC_API_URL is fixed at build time, so the backend starts
 * first and the build points at it. Screenshots land in test-output/frontend/.
 */

const REPO = resolve(import.meta.dirname, "../..");
const HELPDESK = join(REPO, "examples/helpdesk");
const SHOTS = join(REPO, "test-output/frontend");
const CHROMIUM = "/usr/bin/chromium";
const ADMIN = { email: "admin@example.com", password: "admin-password" };

type Rec = { id: string; state?: string } & Record<string, unknown>;

let backend: RunningBackend;
let web: { url: string; stop: () => Promise<void>; logs: () => string };
let browser: Browser;
let context: BrowserContext;
let page: Page;
let token = "";
let buildOutput = "";
let appDir = "";
const outDir = mkdtempSync(join(tmpdir(), "charter-frontend-e2e-"));
const seed: Record<string, Rec> = {};

const log = (line: string) => process.stderr.write(`[frontend e2e] ${line}\n`);

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

async function shot(name: string, fullPage = true): Promise<void> {
  if (fullPage) await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}

/** The board has one column per state (seven here): wide enough to see them all. */
const WIDE = { width: 2000, height: 1000 };
const NORMAL = { width: 1440, height: 900 };

/** Drags a kanban card onto a column with real HTML5 drag events (Playwright drives Chromium's drag). */
async function dragCard(cardId: string, state: string): Promise<void> {
  await page.dragAndDrop(`[data-testid="kanban-card-${cardId}"]`, `[data-testid="kanban-column-${state}"]`);
}

function column(state: string) {
  return page.getByTestId(`kanban-column-${state}`);
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const db = freshDatabase("charter_frontend_e2e");
  backend = await startGeneratedBackend({
    domainDir: HELPDESK,
    outDir,
    backend: "postgres",
    databaseUrl: databaseUrl(db),
    env: { AUTH_ENABLED: "true" },
  });
  log(`backend on ${backend.url}`);

  const { ir } = checkDomain(HELPDESK);
  if (!ir) throw new Error("the helpdesk example does not compile");
  const prepared = prepareNextApp(generateNextjs(ir), { log });
  appDir = prepared.appDir;
  const build = buildNextApp(appDir, { apiUrl: backend.url, log });
  buildOutput = build.output;
  if (build.built) log(`next build took ${(build.ms / 1000).toFixed(1)} s`);
  web = await startNextApp(appDir, await freePort());
  log(`frontend on ${web.url}`);

  // Seed through the API as the admin: two customers, two agents, tickets in several states.
  token = (await api<{ access_token: string }>("POST", "/auth/login", ADMIN)).access_token;
  seed.acme = await api<Rec>("POST", "/customers/", { name: "Acme Corp", email: "ops@acme.example.com", plan: "pro" });
  seed.globex = await api<Rec>("POST", "/customers/", { name: "Globex", email: "it@globex.example.com" });
  seed.ada = await api<Rec>("POST", "/agents/", { name: "Ada Lovelace", email: "ada@example.com", team: "engineering" });
  seed.grace = await api<Rec>("POST", "/agents/", { name: "Grace Hopper", email: "grace@example.com" });
  seed.login = await api<Rec>("POST", "/tickets/", { title: "Cannot log in", customer_id: seed.acme.id, priority: "high" });
  seed.printer = await api<Rec>("POST", "/tickets/", {
    title: "Printer on fire",
    customer_id: seed.globex.id,
    priority: "critical",
    description: "Smoke everywhere, please send help quickly.",
    assignee_id: seed.ada.id,
  });
  seed.outage = await api<Rec>("POST", "/tickets/", {
    title: "Site outage",
    customer_id: seed.acme.id,
    type: "incident",
    priority: "medium",
  });
  seed.dupe = await api<Rec>("POST", "/tickets/", { title: "Duplicate request", customer_id: seed.globex.id, priority: "low" });
  await api("PUT", `/tickets/${seed.dupe.id}/state`, { state: "cancelled" });
  seed.billing = await api<Rec>("POST", "/tickets/", { title: "Invoice is wrong", customer_id: seed.acme.id, assignee_id: seed.grace.id });
  await api("PUT", `/tickets/${seed.billing.id}/state`, { state: "triaged" });
  token = "";

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  context = await browser.newContext({ viewport: NORMAL });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
}, 20 * 60_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await backend?.stop();
  rmSync(outDir, { recursive: true, force: true });
});

describe("generated frontend: next build", () => {
  it("builds with next build: compiled, type-checked, every page routed", () => {
    expect(buildOutput).toMatch(/Compiled successfully/);
    expect(buildOutput).toMatch(/Finished TypeScript/);
    for (const route of [
      "/",
      "/login",
      "/tickets",
      "/tickets/[id]",
      "/tickets/new",
      "/customers",
      "/customers/[id]",
      "/customers/new",
      "/agents",
    ]) {
      expect(buildOutput).toContain(` ${route}\n`);
    }
  });

  it("reports the First Load JS of every route", () => {
    const sizes = firstLoadJs(appDir);
    log(`\n${formatSizes(sizes)}`);
    expect(sizes.map((s) => s.route)).toContain("/tickets");
    for (const s of sizes) expect(s.gzipBytes).toBeGreaterThan(0);
  });
});

describe("generated frontend in Chromium", () => {
  it("asks to sign in, then the login page stores the token and requests carry it", async () => {
    await page.goto(`${web.url}/`);
    await expect.poll(() => page.getByTestId("error-state").textContent()).toContain("Sign in required");
    await page.getByTestId("nav-login").click();
    await page.waitForURL(`${web.url}/login`);
    await page.getByTestId("login-email").fill(ADMIN.email);
    await page.getByTestId("login-password").fill("wrong-password");
    await page.getByTestId("login-submit").click();
    await expect.poll(() => page.getByTestId("login-error").textContent()).toContain("Wrong email or password");
    await page.getByTestId("login-password").fill(ADMIN.password);
    const authorized = page.waitForRequest((r) => r.url().startsWith(`${backend.url}/tickets/`) && r.method() === "GET");
    await page.getByTestId("login-submit").click();
    await page.waitForURL(`${web.url}/`);
    const req = await authorized;
    expect(req.headers().authorization).toMatch(/^Bearer .+/);
    expect(req.headers()["content-type"]).toBe("application/json");
    expect(await page.evaluate(() => localStorage.getItem("charter.token"))).toBeTruthy();
    token = (await api<{ access_token: string }>("POST", "/auth/login", ADMIN)).access_token;
  });

  it("shows the record count of every entity on the dashboard", async () => {
    await page.goto(`${web.url}/`);
    await expect.poll(() => page.getByTestId("count-ticket").textContent()).toBe("5");
    expect(await page.getByTestId("count-customer").textContent()).toBe("2");
    expect(await page.getByTestId("count-agent").textContent()).toBe("2");
    expect(await page.getByTestId("nav-dashboard").getAttribute("data-active")).toBe("true");
    await shot("dashboard");
  });

  it("creates a ticket through the form (reference and enum selects) and lists it in the table", async () => {
    await page.goto(`${web.url}/tickets/new`);
    const customer = page.getByTestId("field-customer_id");
    // The reference select offers every customer, labelled by its display field.
    await expect.poll(() => customer.locator("option").allTextContents()).toEqual(["Select…", "Acme Corp", "Globex"]);
    expect(await page.getByTestId("field-priority").inputValue()).toBe("medium");
    expect(await page.locator('label[for="field-title"] [data-required="true"]').count()).toBe(1);
    // Computed fields never appear on the form.
    for (const f of ["number", "created_at", "reference_code", "state"]) expect(await page.getByTestId(`field-${f}`).count()).toBe(0);
    await page.getByTestId("field-title").fill("Password reset loops");
    await customer.selectOption({ label: "Globex" });
    await page.getByTestId("field-assignee_id").selectOption({ label: "Grace Hopper" });
    await page.getByTestId("field-priority").selectOption("high");
    await page.getByTestId("field-type").selectOption("incident");
    await page.getByTestId("field-description").fill("Users are sent back to the reset page.");
    await shot("form");
    await page.getByTestId("form-submit").click();
    await page.waitForURL(`${web.url}/tickets`);
    await page.getByTestId("view-toggle-table").click();
    const row = page.locator('[data-testid^="row-"]', { hasText: "Password reset loops" });
    await expect.poll(() => row.count()).toBe(1);
    await expect.poll(() => row.locator('[data-column="customer_id"]').textContent()).toBe("Globex");
    await expect.poll(() => row.locator('[data-column="assignee_id"]').textContent()).toBe("Grace Hopper");
    const badge = row.locator('[data-column="priority"] [data-slot="badge"]');
    expect(await badge.textContent()).toBe("High");
    expect(await badge.getAttribute("class")).toContain("bg-orange-50");
    expect(await row.locator('[data-column="number"]').textContent()).toMatch(/^TKT-\d+/);
    const stored = await api<{ items: Rec[] }>("GET", "/tickets/?limit=100&offset=0");
    const created = stored.items.find((t) => t.title === "Password reset loops");
    expect(created).toMatchObject({
      customer_id: seed.globex.id,
      assignee_id: seed.grace.id,
      priority: "high",
      type: "incident",
      state: "new",
    });
    seed.created = created as Rec;
    await shot("list-table");
  });

  it("opens the detail page from the table, with the sidebar link still active", async () => {
    const row = page.locator('[data-testid^="row-"]', { hasText: "Password reset loops" });
    await row.locator("a").first().click();
    await page.waitForURL(`${web.url}/tickets/${seed.created?.id}`);
    await expect.poll(() => page.getByTestId("detail-heading").textContent()).toBe("Password reset loops");
    await expect.poll(() => page.getByTestId("detail-customer_id").textContent()).toBe("Globex");
    expect(await page.getByTestId("detail-state").textContent()).toBe("New");
    // An incident may skip triage (the workflow's type override).
    expect(await page.getByTestId("transition-in_progress").count()).toBe(1);
    expect(await page.getByTestId("transition-triaged").count()).toBe(0);
    expect(await page.getByTestId("nav-tickets").getAttribute("data-active")).toBe("true");
    expect(await page.getByTestId("nav-customers").getAttribute("data-active")).toBe("false");
    expect(await page.getByTestId("nav-dashboard").getAttribute("data-active")).toBe("false");
    await shot("detail");
  });

  it("shows server validation errors at the field, and rule failures above the buttons", async () => {
    await page.goto(`${web.url}/tickets/new`);
    await expect.poll(() => page.getByTestId("field-customer_id").locator("option").count()).toBe(3);
    await page.getByTestId("field-title").fill("ab");
    await page.getByTestId("field-customer_id").selectOption({ label: "Acme Corp" });
    await page.getByTestId("form-submit").click();
    await expect.poll(() => page.getByTestId("field-error-title").textContent()).toMatch(/at least 3 characters/);
    expect(await page.getByTestId("field-title").getAttribute("aria-invalid")).toBe("true");
    await shot("form-validation");
    await page.getByTestId("field-title").fill("Everything is broken");
    await page.getByTestId("field-priority").selectOption("critical");
    await page.getByTestId("field-description").fill("Too short");
    await page.getByTestId("form-submit").click();
    await expect.poll(() => page.getByTestId("form-error").textContent()).toContain("critical ticket needs a description");
    expect(await page.getByTestId("field-error-title").count()).toBe(0);
    expect(page.url()).toBe(`${web.url}/tickets/new`);
  });

  it("moves a card on the kanban to an allowed state, and the move persists", async () => {
    await page.setViewportSize(WIDE);
    await page.goto(`${web.url}/tickets`);
    expect(await page.getByTestId("view-toggle-kanban").getAttribute("data-active")).toBe("true");
    const card = page.getByTestId(`kanban-card-${seed.login?.id}`);
    await expect.poll(() => column("new").getByTestId(`kanban-card-${seed.login?.id}`).count()).toBe(1);
    expect(await page.getByTestId("kanban-header-new").getAttribute("data-tone")).toBe("blue");
    expect(await page.getByTestId("kanban-header-waiting_on_customer").getAttribute("data-tone")).toBe("yellow");
    expect(await page.getByTestId("kanban-header-resolved").getAttribute("data-tone")).toBe("green");

    // Mid-drag: allowed targets are green, the hovered allowed target blue, the rest not droppable.
    await card.hover();
    await page.mouse.down();
    await column("triaged").hover({ position: { x: 120, y: 80 } });
    await column("triaged").hover({ position: { x: 130, y: 90 } });
    await expect.poll(() => column("triaged").getAttribute("data-drop")).toBe("hover");
    expect(await column("cancelled").getAttribute("data-drop")).toBe("valid");
    expect(await column("in_progress").getAttribute("data-drop")).toBe("invalid");
    expect(await column("closed").getAttribute("data-drop")).toBe("invalid");
    await shot("kanban-dragging", false);
    await page.mouse.up();

    await expect.poll(() => column("triaged").getByTestId(`kanban-card-${seed.login?.id}`).count()).toBe(1);
    await expect.poll(async () => (await api<Rec>("GET", `/tickets/${seed.login?.id}`)).state).toBe("triaged");
    await page.reload();
    await expect.poll(() => column("triaged").getByTestId(`kanban-card-${seed.login?.id}`).count()).toBe(1);
    expect(await page.getByTestId("kanban-count-triaged").textContent()).toBe("2");
  });

  it("refuses a drop on a state the workflow does not allow, and puts the card back", async () => {
    const id = seed.login?.id ?? "";
    const calls: string[] = [];
    const listener = (r: { url: () => string; method: () => string }) => {
      if (r.method() === "PUT") calls.push(r.url());
    };
    page.on("request", listener);
    await dragCard(id, "closed");
    await page.waitForTimeout(300);
    page.off("request", listener);
    expect(calls).toEqual([]);
    expect(await column("triaged").getByTestId(`kanban-card-${id}`).count()).toBe(1);
    expect((await api<Rec>("GET", `/tickets/${id}`)).state).toBe("triaged");
  });

  it("shows the server's refusal (a guard) and puts the card back", async () => {
    const id = seed.login?.id ?? "";
    // triaged -> in_progress is allowed, but its guard wants an assignee, which this ticket lacks.
    await dragCard(id, "in_progress");
    await expect.poll(() => page.getByTestId("kanban-error").textContent()).toContain("assignee_id");
    await expect.poll(() => column("triaged").getByTestId(`kanban-card-${id}`).count()).toBe(1);
    expect(await column("in_progress").getByTestId(`kanban-card-${id}`).count()).toBe(0);
    expect((await api<Rec>("GET", `/tickets/${id}`)).state).toBe("triaged");
    await shot("kanban-refused");
  });

  it("honours the workflow's type overrides: an incident moves from new straight to in progress", async () => {
    const id = seed.outage?.id ?? "";
    await dragCard(id, "in_progress");
    await expect.poll(() => column("in_progress").getByTestId(`kanban-card-${id}`).count()).toBe(1);
    // The board moves the card at once and then waits for the server: poll the API, not a moment.
    await expect.poll(async () => (await api<Rec>("GET", `/tickets/${id}`)).state).toBe("in_progress");
  });

  it("dims terminal cards and does not let them be dragged", async () => {
    const card = page.getByTestId(`kanban-card-${seed.dupe?.id}`);
    expect(await column("cancelled").getByTestId(`kanban-card-${seed.dupe?.id}`).count()).toBe(1);
    expect(await card.getAttribute("draggable")).toBe("false");
    expect(await card.getAttribute("data-terminal")).toBe("true");
    expect(Number(await card.evaluate((el) => getComputedStyle(el).opacity))).toBeLessThan(1);
    await dragCard(seed.dupe?.id ?? "", "new");
    await page.waitForTimeout(300);
    expect(await column("cancelled").getByTestId(`kanban-card-${seed.dupe?.id}`).count()).toBe(1);
    // Kanban cards show the card fields: the priority badge and the assignee's name.
    const printer = page.getByTestId(`kanban-card-${seed.printer?.id}`);
    expect(await printer.locator('[data-slot="badge"]').textContent()).toBe("Critical");
    await expect.poll(() => printer.textContent()).toContain("Ada Lovelace");
    await shot("kanban");
    await page.setViewportSize(NORMAL);
  });

  it("toggles between the table and the kanban", async () => {
    await page.getByTestId("view-toggle-table").click();
    await expect.poll(() => page.getByTestId("ticket-table").count()).toBe(1);
    expect(await page.getByTestId("ticket-kanban").count()).toBe(0);
    await page.getByTestId("view-toggle-kanban").click();
    await expect.poll(() => page.getByTestId("ticket-kanban").count()).toBe(1);
    expect(await page.getByTestId("ticket-table").count()).toBe(0);
  });

  it("filters the list by an enum field", async () => {
    await page.getByTestId("view-toggle-table").click();
    await page.getByTestId("filter-priority").selectOption("critical");
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(1);
    expect(await page.locator('[data-testid^="row-"]').textContent()).toContain("Printer on fire");
  });

  it("shows the empty state on a list without records", async () => {
    await page.goto(`${web.url}/tickets`);
    await page.getByTestId("filter-priority").selectOption("low");
    await page.getByTestId("filter-type").selectOption("problem");
    await expect.poll(() => page.getByTestId("empty-state").textContent()).toContain("No tickets match the filters");
  });

  it("edits a record from its detail page", async () => {
    await page.goto(`${web.url}/customers/${seed.globex?.id}`);
    await page.getByTestId("edit-record").click();
    await page.getByTestId("field-company").fill("Globex Corporation");
    // Immutable fields are left out of the edit form.
    expect(await page.getByTestId("field-email").count()).toBe(1);
    await page.getByTestId("form-submit").click();
    await expect.poll(() => page.getByTestId("detail-company").textContent()).toBe("Globex Corporation");
    await page.goto(`${web.url}/agents/${seed.ada?.id}`);
    await page.getByTestId("edit-record").click();
    expect(await page.getByTestId("field-email").count()).toBe(0);
    expect(await page.getByTestId("field-name").inputValue()).toBe("Ada Lovelace");
  });

  it("explains an unreachable API instead of showing a blank page", async () => {
    await page.route(`${backend.url}/**`, (route) => route.abort("connectionrefused"));
    await page.goto(`${web.url}/customers`);
    await expect.poll(() => page.getByTestId("error-state").textContent()).toContain("The API is not reachable");
    expect(await page.getByTestId("app-sidebar").isVisible()).toBe(true);
    await shot("api-down");
    await page.goto(`${web.url}/`);
    await expect.poll(() => page.getByTestId("error-state").textContent()).toContain("The API is not reachable");
    expect(await page.getByTestId("count-ticket").textContent()).toBe("—");
    await page.unroute(`${backend.url}/**`);
  });
});
