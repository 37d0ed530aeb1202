import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { generateNextjs } from "../../src/generators/nextjs/index.js";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { launchChromium } from "../support/chromium.js";
import { freePort } from "../support/net.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { buildNextApp, firstLoadJs, formatSizes, frameworkJs, prepareNextApp, startNextApp } from "./support/next-app.mjs";
import { axeViolations, focused, hasHorizontalOverflow } from "./support/page-checks.js";

/*
 * The generated helpdesk frontend, built with `next build` and driven in headless Chromium against
 * the generated FastAPI backend on PostgreSQL (auth on, as the helpdesk's auth contract asks).
 * One build serves every step: the server components call the backend at the address of
 * NEXT_PUBLIC_API_URL from the build (API_URL overrides it at run time, which a second server uses
 * to show the backend-down state). Screenshots land in test-output/frontend/.
 */

const REPO = resolve(import.meta.dirname, "../..");
const HELPDESK = join(REPO, "examples/helpdesk");
const SHOTS = join(REPO, "test-output/frontend");
const ADMIN = { email: "admin@example.com", password: "admin-password" };

type Rec = { id: string; state?: string } & Record<string, unknown>;

let backend: RunningBackend;
let web: { url: string; stop: () => Promise<void>; logs: () => string };
/** The same build served against a backend that is not there (API_URL is read at run time). */
let down: { url: string; stop: () => Promise<void>; logs: () => string };
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

/** Drags a kanban card onto a column with the mouse, in small steps as a hand would (dnd-kit's mouse sensor). */
/**
 * Waits until the board's drag-and-drop code runs on `p`: the cards are in the server's HTML before
 * it loads, and a press on them before then moves nothing. dnd-kit mounts its live region then.
 */
async function boardReady(p: Page): Promise<void> {
  await p.locator('[id^="DndLiveRegion"]').waitFor({ state: "attached" });
}

/**
 * Where an element is on screen, once it is. `boundingBox()` answers null for an element that React
 * replaces between Playwright finding it and measuring it (a board re-rendered with fresh records).
 */
async function boxOf(locator: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  let box: Awaited<ReturnType<Locator["boundingBox"]>> = null;
  await expect
    .poll(
      async () => {
        box = await locator.boundingBox();
        return box !== null;
      },
      { timeout: 15_000 },
    )
    .toBe(true);
  if (!box) throw new Error("unreachable: the poll ended with a box");
  return box;
}

async function dragCard(cardId: string, state: string): Promise<void> {
  await boardReady(page);
  const from = await boxOf(page.getByTestId(`kanban-card-${cardId}`));
  const to = await boxOf(column(state));
  await page.mouse.move(from.x + 20, from.y + from.height - 6);
  await page.mouse.down();
  await page.mouse.move(from.x + 30, from.y + from.height, { steps: 4 });
  await page.mouse.move(to.x + to.width / 2, to.y + 90, { steps: 12 });
  await page.mouse.up();
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
    // The frontend's server (on 127.0.0.1 here) names the browser; no other caller may.
    env: { AUTH_ENABLED: "true", TRUSTED_PROXIES: "127.0.0.1" },
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
  down = await startNextApp(appDir, await freePort(), { API_URL: `http://127.0.0.1:${await freePort()}` });

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

  browser = await launchChromium();
  context = await browser.newContext({ viewport: NORMAL });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
}, 20 * 60_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await down?.stop();
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

  it("keeps the drag-and-drop library out of the first load of every page, and pages small", () => {
    const sizes = firstLoadJs(appDir);
    const runtime = frameworkJs(appDir);
    log(`\n${formatSizes(sizes)}\nNext.js + React runtime: ${(runtime / 1000).toFixed(1)} kB`);
    expect(sizes.map((s) => s.route)).toEqual(expect.arrayContaining(["/tickets", "/tickets/[id]", "/tickets/new", "/customers"]));
    for (const s of sizes) {
      // dnd-kit announces through a live region with this id; its code must come only with the board.
      const code = s.files.map((f) => readFileSync(join(appDir, ".next", f), "utf8")).join("\n");
      expect(code, s.route).not.toContain("DndLiveRegion");
      // The app's own share on top of the Next.js + React runtime: the part the generator decides.
      // (An empty Next 16 page with one client component is ~3.7 kB over the runtime; see bench/frontend.mjs.)
      expect(s.gzipBytes - runtime, s.route).toBeLessThan(20_000);
    }
  });
});

describe("generated frontend in Chromium", () => {
  it("sends a signed-out visit to sign in and back, then keeps the token in an httpOnly cookie the browser's scripts cannot read", async () => {
    const toBackend: string[] = [];
    page.on("request", (r) => {
      if (r.url().startsWith(backend.url)) toBackend.push(r.url());
    });
    await page.goto(`${web.url}/tickets?view=table`);
    await page.waitForURL(`${web.url}/login?next=${encodeURIComponent("/tickets?view=table")}`);
    await page.getByTestId("login-email").fill(ADMIN.email);
    await page.getByTestId("login-password").fill("wrong-password");
    await page.getByTestId("login-submit").click();
    await expect.poll(() => page.getByTestId("login-error").textContent()).toContain("Wrong email or password");
    await page.getByTestId("login-password").fill(ADMIN.password);
    await page.getByTestId("login-submit").click();
    // Back on the page asked for, with its query.
    await page.waitForURL(`${web.url}/tickets?view=table`);
    await expect.poll(() => page.getByTestId(`row-${seed.printer?.id}`).count()).toBe(1);
    await page.goto(`${web.url}/`);
    // The server rendered the counts with the session's token; the browser never called the API.
    await expect.poll(() => page.getByTestId("count-ticket").textContent()).toBe("5");
    expect(toBackend).toEqual([]);
    const cookie = (await context.cookies(web.url)).find((c) => c.name === "charter_token");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false, path: "/" });
    expect(await page.evaluate(() => document.cookie)).not.toContain("charter_token");
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(cookie?.value ?? "-");
    // A foreign page can neither sign the user in nor call the API through this app.
    const foreign = { "Content-Type": "application/json", Origin: "http://elsewhere.example" };
    expect((await fetch(`${web.url}/session`, { method: "POST", headers: foreign, body: JSON.stringify(ADMIN) })).status).toBe(403);
    const cross = await fetch(`${web.url}/api/backend?to=${encodeURIComponent("/customers/")}`, {
      method: "POST",
      headers: { ...foreign, cookie: `charter_token=${cookie?.value}` },
      body: JSON.stringify({ name: "Mallory", email: "m@elsewhere.example" }),
    });
    expect(cross.status).toBe(403);
    // Sign out (a plain form post) drops the cookie; signing in again restores it.
    await page.getByTestId("nav-logout").click();
    await page.waitForURL(`${web.url}/login`);
    expect((await context.cookies(web.url)).some((c) => c.name === "charter_token")).toBe(false);
    // `next` leads only to a page of this app: another host (`//evil`, `/\evil`, a scheme) means the dashboard.
    await page.goto(`${web.url}/login?next=${encodeURIComponent("//evil.example/phish")}`);
    await page.getByTestId("login-email").fill(ADMIN.email);
    await page.getByTestId("login-password").fill(ADMIN.password);
    await page.getByTestId("login-submit").click();
    await page.waitForURL(`${web.url}/`);
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
    // The toast names the record and what happened, in the polite live region.
    await expect.poll(() => page.getByTestId("toasts").textContent()).toContain("Ticket “Password reset loops” created.");
    expect(await page.getByTestId("toasts").getAttribute("aria-live")).toBe("polite");
    await page.getByTestId("view-toggle-table").click();
    await page.waitForURL(`${web.url}/tickets?view=table`);
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
      customer_id: seed.globex?.id,
      assignee_id: seed.grace?.id,
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
    // The document title names the record.
    await expect.poll(() => page.title()).toBe("Password reset loops · Tickets · Helpdesk");
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
    // The failed rule (priority and description) is shown at both fields in the contract's words,
    // the summary is announced (role=alert) and focus moves to the first invalid field.
    await expect
      .poll(() => page.getByTestId("field-error-description").textContent())
      .toBe("A critical ticket needs a description of at least 20 characters");
    expect(await page.getByTestId("field-error-priority").textContent()).toBe(
      "A critical ticket needs a description of at least 20 characters",
    );
    expect(await page.getByTestId("form-error").textContent()).toContain("2 fields need attention: Description, Priority.");
    expect(await page.getByTestId("form-error").getAttribute("role")).toBe("alert");
    expect(await page.getByTestId("form-error").textContent()).not.toContain("rule failed");
    expect((await focused(page)).id).toBe("field-description");
    expect(await page.getByTestId("field-error-title").count()).toBe(0);
    expect(page.url()).toBe(`${web.url}/tickets/new`);
    await shot("form-rule-error");
  });

  it("shows every bad field's message at once, in plain words, next to its field", async () => {
    await page.goto(`${web.url}/tickets/new`);
    await expect.poll(() => page.getByTestId("field-customer_id").locator("option").count()).toBe(3);
    await page.getByTestId("field-title").fill("ab");
    await page.getByTestId("field-reporter_email").fill("not-an-address");
    await page.getByTestId("field-estimate_hours").fill("2000");
    await page.getByTestId("field-external_url").fill("ftp://example.com");
    // JSON the browser cannot parse: said at once with the server's messages, not in a round before them.
    await page.getByTestId("field-custom_data").fill("{not json");
    await page.getByTestId("form-submit").click();
    await expect.poll(() => page.getByTestId("field-error-title").textContent()).toBe("Must be at least 3 characters");
    const shown = async (name: string) => ({
      message: await page.getByTestId(`field-error-${name}`).textContent(),
      // Inside the field's own box, and tied to its input for screen readers.
      box: await page.getByTestId(`field-error-${name}`).evaluate((el) => el.closest("[data-field]")?.getAttribute("data-field")),
      describedBy: await page.getByTestId(`field-${name}`).getAttribute("aria-describedby"),
    });
    expect(await shown("title")).toEqual({ message: "Must be at least 3 characters", box: "title", describedBy: "field-title-error" });
    expect(await shown("reporter_email")).toEqual({
      message: "Must be a valid e-mail address",
      box: "reporter_email",
      describedBy: "field-reporter_email-error",
    });
    expect(await shown("estimate_hours")).toEqual({
      message: "Must be at most 1000",
      box: "estimate_hours",
      describedBy: "field-estimate_hours-error",
    });
    expect(await shown("external_url")).toEqual({
      message: "Is not in the expected format",
      box: "external_url",
      describedBy: "field-external_url-error",
    });
    expect(await shown("custom_data")).toEqual({ message: "Enter valid JSON", box: "custom_data", describedBy: "field-custom_data-error" });
    // A required field left empty is named too, in the same answer.
    expect(await page.getByTestId("field-error-customer_id").textContent()).toBe("Is required");
    expect(await page.getByTestId("form-error").textContent()).toContain("6 fields need attention");
    expect((await page.locator("[data-error]").allTextContents()).join("\n")).not.toMatch(/should|Value error|\^https/);
    expect(page.url()).toBe(`${web.url}/tickets/new`);
    await shot("form-all-errors");
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
    await boardReady(page);
    const box = await boxOf(card);
    const target = await boxOf(column("triaged"));
    await page.mouse.move(box.x + 20, box.y + box.height - 6);
    await page.mouse.down();
    await page.mouse.move(box.x + 30, box.y + box.height, { steps: 4 });
    await page.mouse.move(target.x + 120, target.y + 90, { steps: 12 });
    await expect.poll(() => column("triaged").getAttribute("data-drop")).toBe("hover");
    expect(await column("cancelled").getAttribute("data-drop")).toBe("valid");
    expect(await column("in_progress").getAttribute("data-drop")).toBe("invalid");
    expect(await column("closed").getAttribute("data-drop")).toBe("invalid");
    await shot("kanban-dragging", false);
    await page.mouse.up();

    await expect.poll(() => column("triaged").getByTestId(`kanban-card-${seed.login?.id}`).count()).toBe(1);
    await expect.poll(async () => (await api<Rec>("GET", `/tickets/${seed.login?.id}`)).state).toBe("triaged");
    await expect.poll(() => page.getByTestId("toasts").textContent()).toContain("Ticket “Cannot log in” moved to Triaged.");
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
    // The refusal is announced through dnd-kit's live region.
    expect(await page.locator('[id^="DndLiveRegion"]').textContent()).toContain("cannot move from Triaged to Closed");
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

  it("moves a card by touch: a press picks it up, a finger drags it to the next column", async () => {
    const ticket = await api<Rec>("POST", "/tickets/", { title: "Moved by touch", customer_id: seed.acme?.id, priority: "low" });
    // A touch tablet: touch events only (no mouse), as a finger sends them, through the DevTools protocol.
    const tablet = await browser.newContext({ viewport: { width: 1366, height: 1024 }, hasTouch: true, isMobile: true });
    try {
      const touch = await tablet.newPage();
      touch.setDefaultTimeout(15_000);
      await tablet.addCookies([{ name: "charter_token", value: token, url: web.url }]);
      await touch.goto(`${web.url}/tickets`);
      const card = touch.getByTestId(`kanban-card-${ticket.id}`);
      await expect.poll(() => touch.getByTestId("kanban-column-new").getByTestId(`kanban-card-${ticket.id}`).count()).toBe(1);
      await boardReady(touch);
      const from = await card.boundingBox();
      const to = await touch.getByTestId("kanban-column-triaged").boundingBox();
      if (!from || !to) throw new Error("the card or the column is not on screen");
      const cdp = await tablet.newCDPSession(touch);
      const finger = (type: "touchStart" | "touchMove" | "touchEnd", x: number, y: number) =>
        cdp.send("Input.dispatchTouchEvent", { type, touchPoints: type === "touchEnd" ? [] : [{ x, y, id: 1 }] });
      const start = { x: from.x + 20, y: from.y + from.height - 6 };
      await finger("touchStart", start.x, start.y);
      // dnd-kit's touch sensor picks the card up after a 200 ms press; its live region says so.
      await expect.poll(() => touch.locator('[id^="DndLiveRegion"]').textContent()).toContain("Picked up Moved by touch");
      const end = { x: to.x + to.width / 2, y: to.y + 90 };
      for (let i = 1; i <= 12; i++) {
        await finger("touchMove", start.x + ((end.x - start.x) * i) / 12, start.y + ((end.y - start.y) * i) / 12);
      }
      await expect.poll(() => touch.getByTestId("kanban-column-triaged").getAttribute("data-drop")).toBe("hover");
      await finger("touchEnd", end.x, end.y);
      await expect.poll(async () => (await api<Rec>("GET", `/tickets/${ticket.id}`)).state).toBe("triaged");
      await expect.poll(() => touch.getByTestId("kanban-column-triaged").getByTestId(`kanban-card-${ticket.id}`).count()).toBe(1);
    } finally {
      await tablet.close();
      await api("DELETE", `/tickets/${ticket.id}`);
    }
  });

  it("marks terminal cards without fading their text, and does not let them be dragged", async () => {
    const card = page.getByTestId(`kanban-card-${seed.dupe?.id}`);
    expect(await column("cancelled").getByTestId(`kanban-card-${seed.dupe?.id}`).count()).toBe(1);
    expect(await card.getAttribute("aria-disabled")).toBe("true");
    expect(await card.getAttribute("data-terminal")).toBe("true");
    // Faded cards failed contrast; the card keeps full opacity and a dashed border instead.
    expect(await card.evaluate((el) => getComputedStyle(el).opacity)).toBe("1");
    expect(await card.evaluate((el) => getComputedStyle(el).borderStyle)).toBe("dashed");
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

  it("renders the rows, the board's cards and the record on the server, with the session cookie", async () => {
    const html = async (path: string, session = true) =>
      (await fetch(`${web.url}${path}`, { headers: session ? { cookie: `charter_token=${token}` } : {} })).text();
    const id = seed.printer?.id ?? "";
    expect(await html("/tickets?view=table")).toContain(`data-testid="row-${id}"`);
    expect(await html("/tickets")).toContain(`data-testid="kanban-card-${id}"`);
    expect(await html(`/tickets/${id}`)).toContain("Printer on fire");
    // Without the cookie the server sends the visit to sign in, and renders nothing of the page.
    const anonymous = await fetch(`${web.url}/tickets?view=table`, { redirect: "manual" });
    expect(anonymous.status).toBe(307);
    expect(new URL(anonymous.headers.get("location") ?? "", web.url).href).toBe(
      `${web.url}/login?next=${encodeURIComponent("/tickets?view=table")}`,
    );
    expect(await anonymous.text()).not.toContain(`data-testid="row-${id}"`);
    // A cookie the backend no longer accepts is sent to sign in as well, to come back to the page after.
    const other = await browser.newContext();
    try {
      await other.addCookies([{ name: "charter_token", value: "expired", url: web.url }]);
      const p = await other.newPage();
      await p.goto(`${web.url}/tickets/${id}`);
      await p.waitForURL(`${web.url}/login?next=${encodeURIComponent(`/tickets/${id}`)}`);
    } finally {
      await other.close();
    }
  });

  it("toggles between the table and the kanban, with the view in the URL", async () => {
    await page.getByTestId("view-toggle-table").click();
    await expect.poll(() => page.getByTestId("ticket-table").count()).toBe(1);
    expect(page.url()).toBe(`${web.url}/tickets?view=table`);
    expect(await page.getByTestId("ticket-kanban").count()).toBe(0);
    await page.getByTestId("view-toggle-kanban").click();
    await expect.poll(() => page.getByTestId("ticket-kanban").count()).toBe(1);
    expect(await page.getByTestId("ticket-table").count()).toBe(0);
    expect(page.url()).toBe(`${web.url}/tickets`);
    // Back restores the table.
    await page.goBack();
    await expect.poll(() => page.getByTestId("ticket-table").count()).toBe(1);
  });

  it("filters the list by an enum field, and a reload keeps the filter", async () => {
    // The server's answer (the RSC request of the client navigation) is held back a moment, so the
    // list can be seen busy meanwhile.
    const slow = (u: URL) => u.pathname === "/tickets";
    await page.route(slow, async (route) => {
      if (route.request().headers().rsc) await new Promise((r) => setTimeout(r, 500));
      await route.continue();
    });
    try {
      const busy = () => page.locator("[data-busy]").getAttribute("aria-busy");
      expect(await busy()).toBe("false");
      await page.getByTestId("filter-priority").selectOption("critical");
      await expect.poll(busy).toBe("true");
      await expect.poll(() => page.locator('[data-testid^="row-"]').count(), { timeout: 10_000 }).toBe(1);
      await expect.poll(busy).toBe("false");
    } finally {
      await page.unroute(slow);
    }
    expect(page.url()).toBe(`${web.url}/tickets?view=table&priority=critical`);
    expect(await page.locator('[data-testid^="row-"]').textContent()).toContain("Printer on fire");
    await page.reload();
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(1);
    expect(await page.getByTestId("filter-priority").inputValue()).toBe("critical");
  });

  it("shows the no-match state with a way to clear the filters", async () => {
    await page.goto(`${web.url}/tickets?view=table&priority=low&type=problem`);
    await expect.poll(() => page.getByTestId("empty-state").textContent()).toContain("No tickets match");
    await page.getByTestId("empty-clear-filters").click();
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(6);
    expect(page.url()).toBe(`${web.url}/tickets?view=table`);
  });

  it("edits a record from its detail page", async () => {
    await page.goto(`${web.url}/customers/${seed.globex?.id}`);
    await page.getByTestId("edit-record").click();
    await page.getByTestId("field-company").fill("Globex Corporation");
    // Immutable fields are left out of the edit form.
    expect(await page.getByTestId("field-email").count()).toBe(1);
    await page.getByTestId("form-submit").click();
    await expect.poll(() => page.getByTestId("detail-company").textContent()).toBe("Globex Corporation");
    await expect.poll(() => page.getByTestId("toasts").textContent()).toContain("Customer “Globex” saved.");
    await page.goto(`${web.url}/agents/${seed.ada?.id}`);
    await page.getByTestId("edit-record").click();
    expect(await page.getByTestId("field-email").count()).toBe(0);
    expect(await page.getByTestId("field-name").inputValue()).toBe("Ada Lovelace");
  });

  it("explains an unreachable API instead of showing a blank page", async () => {
    await context.addCookies([{ name: "charter_token", value: token, url: down.url }]);
    await page.goto(`${down.url}/customers`);
    await expect.poll(() => page.getByTestId("error-state").textContent()).toContain("The API is not reachable");
    expect(await page.getByTestId("app-sidebar").isVisible()).toBe(true);
    await shot("api-down");
    await page.goto(`${down.url}/`);
    await expect.poll(() => page.getByTestId("error-state").textContent()).toContain("The API is not reachable");
    expect(await page.getByTestId("count-ticket").textContent()).toBe("—");
  });
});

/** Tab (or Shift+Tab) until `match` says the focused element is the one wanted. */
async function tabTo(match: (f: Awaited<ReturnType<typeof focused>>) => boolean, backwards = false, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(backwards ? "Shift+Tab" : "Tab");
    if (match(await focused(page))) return;
  }
  throw new Error(`no focus target after ${max} Tab presses (last: ${JSON.stringify(await focused(page))})`);
}

/** The generated pages of the helpdesk (the list in both views, a form, a detail page). */
function everyPage(): string[] {
  return ["/", "/tickets", "/tickets?view=table", "/tickets/new", `/tickets/${seed.printer?.id}`, "/customers", "/agents"];
}

const byTestId = (id: string) => (f: Awaited<ReturnType<typeof focused>>) => f.testId === id;

describe("generated frontend for keyboard, screen reader and phone users", () => {
  const extra: Rec[] = [];

  beforeAll(async () => {
    await page.setViewportSize(NORMAL);
    // Enough customers for two pages of ten.
    for (let i = 1; i <= 12; i++) {
      extra.push(await api<Rec>("POST", "/customers/", { name: `Zeta ${String(i).padStart(2, "0")}`, email: `zeta${i}@example.com` }));
    }
  });

  it("passes axe (no serious or critical violation) on every page, at 1440 and 375 px, light and dark", async () => {
    const found: string[] = [];
    const check = async (label: string) => {
      for (const v of await axeViolations(page))
        found.push(`${label}: ${v.id} (${v.impact}) ${v.help} at ${v.targets.slice(0, 3).join(", ")}`);
    };
    const ready = async () => {
      await expect.poll(() => page.getByTestId("loading-state").count()).toBe(0);
    };
    const pages = [...everyPage(), `/customers/${seed.acme?.id}`, "/tickets/00000000-0000-4000-8000-000000000000"];
    for (const viewport of [NORMAL, { width: 375, height: 812 }]) {
      for (const scheme of ["light", "dark"] as const) {
        await page.setViewportSize(viewport);
        await page.emulateMedia({ colorScheme: scheme });
        await page.evaluate(() => localStorage.removeItem("charter.theme"));
        const tag = `${viewport.width}px ${scheme}`;
        for (const path of pages) {
          await page.goto(`${web.url}${path}`);
          await ready();
          expect(await page.evaluate(() => document.documentElement.classList.contains("dark")), `${tag} ${path}`).toBe(scheme === "dark");
          await check(`${tag} ${path}`);
        }
        // A form showing the server's errors.
        await page.goto(`${web.url}/tickets/new`);
        await expect.poll(() => page.getByTestId("field-customer_id").locator("option").count()).toBeGreaterThan(1);
        await page.getByTestId("field-title").fill("ab");
        await page.getByTestId("form-submit").click();
        await expect.poll(() => page.getByTestId("field-error-title").count()).toBe(1);
        await check(`${tag} form with server errors`);
        if (viewport.width === 375 && scheme === "dark") await shot("phone-dark-form-errors");
        // The kanban mid-move, with its live region.
        await page.goto(`${web.url}/tickets`);
        await ready();
        await check(`${tag} kanban`);
        // The backend down.
        await page.goto(`${down.url}/customers`);
        await expect.poll(() => page.getByTestId("error-state").count()).toBe(1);
        await check(`${tag} backend down`);
        // The login page, signed out.
        await page.goto(`${web.url}/login`);
        await check(`${tag} login`);
      }
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize(NORMAL);
    expect(found).toEqual([]);
  });

  it("gives every page one h1 of its own, its own title, a favicon and a real not-found state", async () => {
    const titles = new Set<string>();
    for (const path of ["/", "/tickets", "/tickets/new", "/customers", "/customers/new", "/agents", "/login"]) {
      await page.goto(`${web.url}${path}`);
      await expect.poll(() => page.locator("h1").count(), { message: `one h1 on ${path}` }).toBe(1);
      titles.add(await page.title());
    }
    expect(titles.size).toBe(7);
    await page.goto(`${web.url}/tickets/00000000-0000-4000-8000-000000000000`);
    await expect.poll(() => page.locator("h1").textContent()).toBe("Ticket not found");
    expect(await page.getByTestId("not-found").getByRole("link", { name: "Back to Tickets" }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Try again" }).count()).toBe(0);
    const icon = await fetch(`${web.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toContain("image/svg+xml");
  });

  it("keeps the chosen theme across reloads, applied before the first paint", async () => {
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(`${web.url}/customers`);
    await page.getByTestId("theme-toggle").click();
    expect(await page.evaluate(() => document.documentElement.classList.contains("dark"))).toBe(true);
    expect(await page.getByTestId("theme-toggle").getAttribute("aria-pressed")).toBe("true");
    await page.addInitScript(() => {
      document.addEventListener("DOMContentLoaded", () => {
        (window as unknown as { darkAtLoad: boolean }).darkAtLoad = document.documentElement.classList.contains("dark");
      });
    });
    await page.reload();
    expect(await page.evaluate(() => (window as unknown as { darkAtLoad: boolean }).darkAtLoad)).toBe(true);
    await shot("customers-dark");
    await page.getByTestId("theme-toggle").click();
    expect(await page.evaluate(() => localStorage.getItem("charter.theme"))).toBe("light");
  });

  it("lets a keyboard-only user skip, sort, search, filter, page, open, edit, fix, move and delete", async () => {
    // Skip link: the first Tab stop, moving focus to <main>.
    await page.goto(`${web.url}/customers`);
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(14);
    await page.keyboard.press("Tab");
    expect((await focused(page)).testId).toBe("skip-link");
    await page.keyboard.press("Enter");
    expect((await focused(page)).id).toBe("main");

    // Sort by name: the header button keeps the focus, the URL and aria-sort follow, the change is announced.
    await tabTo(byTestId("sort-name"));
    await page.keyboard.press("Enter");
    await page.waitForURL(`${web.url}/customers?sort=name`);
    await expect.poll(() => page.getByTestId("list-status").textContent()).toContain("Sorted by Name, ascending. 14 customers.");
    expect((await focused(page)).testId).toBe("sort-name");
    expect(await page.locator('th[aria-sort="ascending"]').textContent()).toBe("Name");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${web.url}/customers?sort=-name`);
    await expect.poll(() => page.locator('[data-testid^="row-"] [data-column="name"]').first().textContent()).toBe("Zeta 12");

    // Page size 10, then the next page: focus stays on Next.
    await tabTo(byTestId("page-size"));
    // From 25, one ArrowUp picks the option above: 10.
    await page.keyboard.press("ArrowUp");
    await page.waitForURL(`${web.url}/customers?sort=-name&size=10`);
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(10);
    await tabTo(byTestId("page-next"));
    await page.keyboard.press("Enter");
    await page.waitForURL(`${web.url}/customers?sort=-name&size=10&page=2`);
    await expect.poll(() => page.getByTestId("list-status").textContent()).toBe("Page 2 of 2. 14 customers. Showing 11 to 14.");
    expect((await focused(page)).testId).toBe("page-next");
    expect(await page.getByTestId("page-next").getAttribute("aria-disabled")).toBe("true");
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(4);
    // Back restores the first page.
    await page.goBack();
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(10);

    // Search (debounced, bound to q).
    await page.goto(`${web.url}/customers`);
    await page.keyboard.press("Tab");
    await tabTo(byTestId("search"));
    await page.keyboard.type("Globex");
    await page.waitForURL(`${web.url}/customers?q=Globex`);
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(1);
    expect((await focused(page)).testId).toBe("search");

    // Open the record with Enter on its link, edit it with Enter, fix a field error.
    // The first column is the number, which links to the record.
    await tabTo((f) => f.tag === "a" && f.text === "CUS-00002");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${web.url}/customers/${seed.globex?.id}`);
    await expect.poll(() => page.getByTestId("detail-heading").textContent()).toBe("Globex");
    await tabTo(byTestId("edit-record"));
    await page.keyboard.press("Enter");
    await tabTo((f) => f.id === "field-email");
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("not-an-email");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("field-error-email").count()).toBe(1);
    expect((await focused(page)).id).toBe("field-email");
    expect(await page.getByTestId("form-error").textContent()).toContain("1 field needs attention: Email.");
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("help@globex.example.com");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("detail-email").textContent()).toBe("help@globex.example.com");
    expect((await api<Rec>("GET", `/customers/${seed.globex?.id}`)).email).toBe("help@globex.example.com");
    await expect.poll(() => page.getByTestId("toasts").textContent()).toContain("Customer “Globex” saved.");

    // Filter the ticket table by typing into the priority select.
    await page.goto(`${web.url}/tickets?view=table`);
    await tabTo(byTestId("filter-priority"));
    // The last option of the select.
    await page.keyboard.press("End");
    await page.waitForURL(`${web.url}/tickets?view=table&priority=critical`);
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBe(1);

    // Move a card on the board: Space picks it up, one Right press moves it a column, Space drops it.
    const id = seed.printer?.id ?? "";
    expect((await api<Rec>("GET", `/tickets/${id}`)).state).toBe("new");
    await page.setViewportSize(WIDE);
    await page.goto(`${web.url}/tickets`);
    await expect.poll(() => column("new").getByTestId(`kanban-card-${id}`).count()).toBe(1);
    await tabTo(byTestId(`kanban-card-${id}`));
    // Every announcement of dnd-kit's live region, in order (each one replaces the one before).
    await page.evaluate(() => {
      const w = window as unknown as { said: string[] };
      w.said = [];
      const region = document.querySelector('[id^="DndLiveRegion"]');
      if (!region) throw new Error("no dnd-kit live region on the board");
      new MutationObserver(() => w.said.push(region.textContent ?? "")).observe(region, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
    const said = () => page.evaluate(() => (window as unknown as { said: string[] }).said.join(" | "));
    // dnd-kit starts listening for the move keys in an effect after the pick-up renders: let two
    // frames pass so a key pressed by a fast (or a loaded) machine is not lost in between.
    const settle = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.keyboard.press("Space");
    await expect.poll(said).toContain("Picked up Printer on fire in New.");
    await settle();
    await page.keyboard.press("ArrowRight");
    await expect.poll(said).toContain("Printer on fire is over Triaged.");
    await settle();
    await page.keyboard.press("Space");
    await expect.poll(said).toContain("Dropped Printer on fire in Triaged.");
    await expect.poll(async () => (await api<Rec>("GET", `/tickets/${id}`)).state).toBe("triaged");
    await expect.poll(() => column("triaged").getByTestId(`kanban-card-${id}`).count()).toBe(1);
    await expect.poll(() => focused(page).then((f) => f.testId)).toBe(`kanban-card-${id}`);
    await expect.poll(() => page.getByTestId("toasts").textContent()).toContain("Ticket “Printer on fire” moved to Triaged.");
    // Escape cancels a move.
    await page.keyboard.press("Enter");
    await settle();
    await page.keyboard.press("ArrowRight");
    await settle();
    await page.keyboard.press("Escape");
    await expect.poll(said).toContain("Move cancelled. Printer on fire stays in Triaged.");
    expect((await api<Rec>("GET", `/tickets/${id}`)).state).toBe("triaged");
    await page.setViewportSize(NORMAL);

    // Delete through the dialog: Escape cancels and focus returns to Delete; then confirm.
    const doomed = extra[0] as Rec;
    await page.goto(`${web.url}/customers/${doomed.id}`);
    await expect.poll(() => page.getByTestId("detail-heading").textContent()).toBe("Zeta 01");
    await tabTo(byTestId("delete-record"));
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("confirm-dialog").getAttribute("open")).toBe("");
    expect((await focused(page)).testId).toBe("confirm-cancel");
    // Tab stays inside the dialog.
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press("Tab");
      expect(["confirm-cancel", "confirm-accept"]).toContain((await focused(page)).testId);
    }
    await page.keyboard.press("Escape");
    await expect.poll(() => page.getByTestId("confirm-dialog").getAttribute("open")).toBe(null);
    expect((await focused(page)).testId).toBe("delete-record");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("confirm-dialog").getAttribute("open")).toBe("");
    await tabTo(byTestId("confirm-accept"));
    await page.keyboard.press("Enter");
    await page.waitForURL(`${web.url}/customers`);
    await expect.poll(() => page.getByTestId("toasts").textContent()).toContain("Customer “Zeta 01” deleted.");
    await expect(api("GET", `/customers/${doomed.id}`)).rejects.toThrow(/404/);
  });

  it("fits a 375 px phone: no sideways scrolling, a menu button that opens and closes the drawer", async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    for (const path of [...everyPage(), "/login"]) {
      await page.goto(`${web.url}${path}`);
      await expect.poll(() => page.getByTestId("loading-state").count()).toBe(0);
      expect(await hasHorizontalOverflow(page), path).toMatchObject({ overflow: false });
    }
    await page.goto(`${web.url}/tickets?view=table`);
    await expect.poll(() => page.getByTestId("ticket-table").count()).toBe(1);
    await shot("phone-table");
    expect(await page.getByTestId("app-sidebar").isVisible()).toBe(false);
    const menu = page.getByTestId("menu-button");
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await menu.getAttribute("aria-controls")).toBe("nav-drawer");
    const size = await menu.boundingBox();
    expect(size?.width).toBeGreaterThanOrEqual(24);
    expect(size?.height).toBeGreaterThanOrEqual(24);
    await menu.click();
    await expect.poll(() => page.getByTestId("nav-drawer").getAttribute("open")).toBe("");
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    await shot("phone-drawer", false);
    // Focus stays in the drawer.
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.getElementById("nav-drawer")?.contains(document.activeElement) ?? false)).toBe(true);
    }
    await page.keyboard.press("Escape");
    await expect.poll(() => page.getByTestId("nav-drawer").getAttribute("open")).toBe(null);
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect((await focused(page)).testId).toBe("menu-button");
    // Navigating from the drawer closes it.
    await menu.click();
    await page.getByTestId("nav-drawer").getByTestId("nav-customers").click();
    await page.waitForURL(`${web.url}/customers`);
    await expect.poll(() => page.getByTestId("nav-drawer").getAttribute("open")).toBe(null);
    await page.goto(`${web.url}/tickets`);
    await expect.poll(() => page.getByTestId("ticket-kanban").count()).toBe(1);
    expect(await hasHorizontalOverflow(page)).toMatchObject({ overflow: false });
    await shot("phone-kanban", false);
    await page.setViewportSize(NORMAL);
  });

  it("loads the board's drag-and-drop code only on a page that shows a board", async () => {
    const scripts: string[] = [];
    const listener = async (r: { url: () => string; text: () => Promise<string> }) => {
      if (r.url().endsWith(".js")) scripts.push(await r.text().catch(() => ""));
    };
    page.on("response", listener);
    await page.goto(`${web.url}/customers`);
    await expect.poll(() => page.locator('[data-testid^="row-"]').count()).toBeGreaterThan(0);
    expect(scripts.some((t) => t.includes("DndLiveRegion"))).toBe(false);
    await page.goto(`${web.url}/tickets?view=table`);
    await expect.poll(() => page.getByTestId("ticket-table").count()).toBe(1);
    expect(scripts.some((t) => t.includes("DndLiveRegion"))).toBe(false);
    await page.getByTestId("view-toggle-kanban").click();
    await expect.poll(() => page.getByTestId("ticket-kanban").count()).toBe(1);
    await expect.poll(() => scripts.some((t) => t.includes("DndLiveRegion"))).toBe(true);
    page.off("response", listener);
  });
});

/** One HTTP call from a chosen loopback address: how a test is several browsers (or attackers) at once. */
function callFrom(
  from: string,
  url: string,
  method: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((done, fail) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      url,
      { method, localAddress: from, headers: { ...(payload ? { "Content-Type": "application/json" } : {}), ...headers } },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => {
          text += d.toString();
        });
        res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", fail);
    req.end(payload);
  });
}

describe("generated frontend and API against sign-in and session attacks", () => {
  it("counts failed sign-ins per browser: 21 from one lock only that one, with Retry-After through /session", async () => {
    const attacker = "127.0.0.2";
    for (let i = 0; i < 20; i++) {
      const r = await callFrom(attacker, `${web.url}/session`, "POST", { email: `nobody${i}@example.com`, password: "guess" });
      expect(r.status, `attempt ${i + 1}`).toBe(401);
    }
    const locked = await callFrom(attacker, `${web.url}/session`, "POST", { email: "nobody20@example.com", password: "guess" });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
    // Another browser signs in at once: the frontend's own address was never what was counted.
    const other = await callFrom("127.0.0.3", `${web.url}/session`, "POST", ADMIN);
    expect(other.status).toBe(204);
    // A made-up X-Forwarded-For through the frontend does not get the attacker a fresh address.
    const spoofed = await callFrom(
      attacker,
      `${web.url}/session`,
      "POST",
      { email: "x@example.com", password: "guess" },
      { "X-Forwarded-For": "203.0.113.9" },
    );
    expect(spoofed.status).toBe(429);
  });

  it("throttles a direct caller who rotates X-Forwarded-For by its own address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      const r = await callFrom(
        "127.0.0.4",
        `${backend.url}/auth/login`,
        "POST",
        { email: `rot${i}@example.com`, password: "guess" },
        { "X-Forwarded-For": `198.51.100.${i}` },
      );
      statuses.push(r.status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses[20]).toBe(429);
  });

  it("counts failures per account whichever identifier is typed", async () => {
    for (let i = 0; i < 5; i++) {
      const r = await callFrom(`127.0.1.${i + 1}`, `${backend.url}/auth/login`, "POST", { email: "Victor@Example.com", password: "guess" });
      expect(r.status).toBe(401);
    }
    const byId = await callFrom("127.0.1.9", `${backend.url}/auth/login`, "POST", { id: "victor", password: "viewer-password" });
    expect(byId.status).toBe(429);
  });

  it("keeps tokens and the API's documents out of the page's reach through /api/backend", async () => {
    const cookie = (await context.cookies(web.url)).find((c) => c.name === "charter_token");
    expect(cookie).toBeDefined();
    const jar = { cookie: `charter_token=${cookie?.value}` };
    const via = (to: string, method = "GET") =>
      fetch(`${web.url}/api/backend?to=${encodeURIComponent(to)}`, { method, headers: jar, redirect: "manual" });
    for (const to of [
      "/auth/refresh",
      "/auth/login",
      "/auth/me",
      "/docs",
      "/openapi.json",
      "/redoc",
      "/customers/../auth/refresh",
      "/customers/%2e%2e/auth/me",
      "/customers%2F..%2Fauth/me",
      "//evil.example/",
    ]) {
      const r = await via(to, to.startsWith("/auth/") ? "POST" : "GET");
      expect(r.status, to).toBe(403);
      expect(await r.text(), to).not.toContain("access_token");
    }
    expect((await via("/customers/")).status).toBe(200);
    // Refresh goes through the frontend's own route: a new cookie, no token in the answer.
    const refreshed = await fetch(`${web.url}/session`, { method: "PUT", headers: { ...jar, Origin: web.url } });
    expect(refreshed.status).toBe(204);
    expect(await refreshed.text()).toBe("");
    expect(refreshed.headers.get("set-cookie")).toMatch(/^charter_token=[^;]+;.*HttpOnly/i);
    expect((await fetch(`${web.url}/session`, { method: "PUT", headers: { ...jar, Origin: "http://elsewhere.example" } })).status).toBe(
      403,
    );
    const wrong = await via("/customers/", "PUT");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toContain("GET");
  });

  it("passes the backend's Retry-After, Allow and Location through /api/backend, Location pointed back at the proxy", async () => {
    // The generated API sends no Location today: a stand-in backend that answers with all three.
    const fake = createServer((req, res) => {
      const headers: Record<string, string> = { "Content-Type": "application/json", "Retry-After": "7", Allow: "GET, POST" };
      headers.Location = req.url === "/customers/abs" ? `http://127.0.0.1:${port}/customers/moved?x=1` : "https://elsewhere.example/";
      res.writeHead(303, headers).end("{}");
    });
    const port = await freePort();
    await new Promise<void>((r) => fake.listen(port, "127.0.0.1", r));
    const third = await startNextApp(appDir, await freePort(), { API_URL: `http://127.0.0.1:${port}` });
    try {
      const r = await fetch(`${third.url}/api/backend?to=${encodeURIComponent("/customers/abs")}`, { redirect: "manual" });
      expect(r.status).toBe(303);
      expect(r.headers.get("retry-after")).toBe("7");
      expect(r.headers.get("allow")).toBe("GET, POST");
      expect(r.headers.get("location")).toBe(`/api/backend?to=${encodeURIComponent("/customers/moved?x=1")}`);
      const away = await fetch(`${third.url}/api/backend?to=${encodeURIComponent("/customers/other")}`, { redirect: "manual" });
      expect(away.headers.get("location")).toBe("https://elsewhere.example/");
    } finally {
      await third.stop();
      fake.close();
    }
  });

  it("sends a nonce-based Content-Security-Policy, no framing, nosniff and a Referrer-Policy; pages still run", async () => {
    const r = await fetch(`${web.url}/login`);
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    const nonce = /script-src 'self' 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).not.toContain("unsafe-eval");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    const html = await r.text();
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    // A second request gets another nonce.
    expect((await fetch(`${web.url}/login`)).headers.get("content-security-policy")).not.toContain(`nonce-${nonce}`);
    // Under that policy the page runs: no violation, and the client-side sign-in still works.
    const violations: string[] = [];
    const p = await context.newPage();
    p.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    await p.goto(`${web.url}/tickets`);
    await expect.poll(() => p.locator('[data-testid^="kanban-card-"], [data-testid^="row-"]').count()).toBeGreaterThan(0);
    await p.close();
    expect(violations).toEqual([]);
  });

  it("refuses a sign-out posted from another origin, and keeps the session", async () => {
    const cookie = (await context.cookies(web.url)).find((c) => c.name === "charter_token");
    const r = await fetch(`${web.url}/logout`, {
      method: "POST",
      headers: { Origin: "http://elsewhere.example", cookie: `charter_token=${cookie?.value}` },
      redirect: "manual",
    });
    expect(r.status).toBe(403);
    expect(r.headers.get("set-cookie")).toBeNull();
    const same = await fetch(`${web.url}/logout`, {
      method: "POST",
      headers: { Origin: web.url, cookie: `charter_token=${cookie?.value}` },
      redirect: "manual",
    });
    expect(same.status).toBe(303);
  });
});
