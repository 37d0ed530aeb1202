import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { generateNextjs } from "../../src/generators/nextjs/index.js";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { hydrated, launchChromium } from "../support/chromium.js";
import { freePort } from "../support/net.js";
import { buildNextApp, prepareNextApp, startNextApp } from "./support/next-app.mjs";
import { axeViolations, hasHorizontalOverflow } from "./support/page-checks.js";

/*
 * The second domain (test/fixtures/frontend/library): no workflow, no auth, and dates, date-times,
 * booleans, numbers and a reference used as filters, so nothing in the generated frontend is tuned
 * to the helpdesk example. The backend runs on the memory store; the browser is Debian's Chromium.
 */

const REPO = resolve(import.meta.dirname, "../..");
const LIBRARY = join(REPO, "test/fixtures/frontend/library");
const SHOTS = join(REPO, "test-output/frontend");

type Rec = { id: string } & Record<string, unknown>;

let backend: RunningBackend;
let web: { url: string; stop: () => Promise<void> };
let browser: Browser;
const outDir = mkdtempSync(join(tmpdir(), "charter-frontend-library-"));
const seed: Record<string, Rec> = {};
const log = (line: string) => process.stderr.write(`[frontend library] ${line}\n`);

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const r = await fetch(`${backend.url}${path}`, {
    method,
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

async function open(timezoneId: string, viewport = { width: 1440, height: 900 }): Promise<Page> {
  const context = await browser.newContext({ viewport, timezoneId, locale: "en-US" });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

const rows = (page: Page) => page.locator('[data-testid^="row-"]');

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  backend = await startGeneratedBackend({ domainDir: LIBRARY, outDir, backend: "memory" });
  const { ir, findings } = checkDomain(LIBRARY);
  if (!ir) throw new Error(findings.map((f) => f.message).join("\n"));
  const { appDir } = prepareNextApp(generateNextjs(ir), { log, slot: "library" });
  const build = buildNextApp(appDir, { apiUrl: backend.url, log });
  if (build.built) log(`next build took ${(build.ms / 1000).toFixed(1)} s`);
  web = await startNextApp(appDir, await freePort());

  seed.le = await api<Rec>("POST", "/authors/", { full_name: "Ursula K. Le Guin", born_on: "1929-10-21", active: false });
  seed.mantel = await api<Rec>("POST", "/authors/", { full_name: "Hilary Mantel", born_on: "1952-07-06" });
  // 12:30 UTC: 07:30 in New York (EST), 21:30 in Tokyo, the same instant.
  seed.dispossessed = await api<Rec>("POST", "/books/", {
    title: "The Dispossessed",
    author_id: seed.le.id,
    genre: "fiction",
    published_on: "1974-05-01",
    last_borrowed_at: "2026-01-15T12:30:00Z",
    in_print: true,
    pages: 387,
    price: 12.5,
  });
  seed.wolf = await api<Rec>("POST", "/books/", {
    title: "Wolf Hall",
    author_id: seed.mantel.id,
    genre: "history",
    published_on: "2009-04-30",
    in_print: false,
    pages: 653,
  });
  seed.lathe = await api<Rec>("POST", "/books/", {
    title: "The Lathe of Heaven",
    author_id: seed.le.id,
    genre: "science",
    published_on: "1971-01-01",
  });
  browser = await launchChromium();
}, 20 * 60_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await backend?.stop();
  rmSync(outDir, { recursive: true, force: true });
});

describe("generated frontend of a second domain (no workflow, other field types)", () => {
  it.each([
    ["America/New_York", "2026-01-15 07:30 EST", "2026-01-15T07:30"],
    ["Asia/Tokyo", "2026-01-15 21:30 GMT+9", "2026-01-15T21:30"],
  ])("shows and edits a date-time in the browser's zone (%s), and a date unshifted", async (zone, shown, edited) => {
    const page = await open(zone);
    await page.goto(`${web.url}/books/${seed.dispossessed?.id}`);
    await expect.poll(() => page.getByTestId("detail-last_borrowed_at").textContent()).toBe(shown);
    expect(await page.getByTestId("detail-published_on").textContent()).toBe("1974-05-01");
    await page.getByTestId("edit-record").click();
    expect(await page.getByTestId("field-last_borrowed_at").inputValue()).toBe(edited);
    expect(await page.getByTestId("field-published_on").inputValue()).toBe("1974-05-01");
    expect(await page.locator('label[for="field-last_borrowed_at"]').textContent()).toContain(`(${zone})`);
    // Saving an edit elsewhere leaves the instant and the date alone.
    await page.getByTestId("field-pages").fill("388");
    await page.getByTestId("form-submit").click();
    await expect.poll(() => page.getByTestId("detail-pages").textContent()).toBe("388");
    const stored = await api<Rec>("GET", `/books/${seed.dispossessed?.id}`);
    expect(new Date(String(stored.last_borrowed_at)).toISOString()).toBe("2026-01-15T12:30:00.000Z");
    expect(stored.published_on).toBe("1974-05-01");
    await page.context().close();
  });

  it("stores a date-time typed in the browser's zone as that instant", async () => {
    const page = await open("Asia/Tokyo");
    await page.goto(`${web.url}/books/${seed.wolf?.id}`);
    await page.getByTestId("edit-record").click();
    await page.getByTestId("field-last_borrowed_at").fill("2026-03-01T09:15");
    await page.getByTestId("form-submit").click();
    await expect.poll(() => page.getByTestId("detail-last_borrowed_at").textContent()).toBe("2026-03-01 09:15 GMT+9");
    const stored = await api<Rec>("GET", `/books/${seed.wolf?.id}`);
    expect(new Date(String(stored.last_borrowed_at)).toISOString()).toBe("2026-03-01T00:15:00.000Z");
    await page.context().close();
  });

  it("edits a duration field as ISO 8601 text the browser checks before the API", async () => {
    const page = await open("UTC");
    await page.goto(`${web.url}/books/${seed.lathe?.id}`);
    await page.getByTestId("edit-record").click();
    const input = page.getByTestId("field-loan_period");
    expect(await input.getAttribute("placeholder")).toBe("PT1H30M");
    await input.fill("P1Y");
    expect(await input.evaluate((el: HTMLInputElement) => el.validity.patternMismatch)).toBe(true);
    await input.fill("PT36H");
    expect(await input.evaluate((el: HTMLInputElement) => el.validity.valid)).toBe(true);
    await page.getByTestId("form-submit").click();
    await expect.poll(async () => (await api<Rec>("GET", `/books/${seed.lathe?.id}`)).loan_period).toBe("P1DT12H");
    await page.reload();
    await page.getByTestId("edit-record").click();
    await expect.poll(() => page.getByTestId("field-loan_period").inputValue()).toBe("P1DT12H");
    await page.context().close();
  });

  it("filters by enum, boolean, reference and date fields, searches, and keeps it all in the URL", async () => {
    const page = await open("UTC");
    await page.goto(`${web.url}/books`);
    await expect.poll(() => rows(page).count()).toBe(3);
    await hydrated(page.getByTestId("filter-author_id"));
    await page.getByTestId("filter-author_id").selectOption({ label: "Ursula K. Le Guin" });
    await expect.poll(() => rows(page).count()).toBe(2);
    await page.getByTestId("filter-genre").selectOption("science");
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().textContent()).toContain("The Lathe of Heaven");
    await page.getByTestId("clear-filters").click();
    await expect.poll(() => rows(page).count()).toBe(3);
    await page.getByTestId("filter-in_print").selectOption("false");
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(page.url()).toBe(`${web.url}/books?in_print=false`);
    await page.getByTestId("clear-filters").click();
    // The in_print filter also left one row: wait for the cleared list before filtering again.
    await expect.poll(() => rows(page).count()).toBe(3);
    // A date range (inclusive), bound to published_on_from / published_on_to.
    await page.getByTestId("filter-published_on-from").fill("1971-01-01");
    await expect.poll(() => page.url()).toBe(`${web.url}/books?published_on_from=1971-01-01`);
    await page.getByTestId("filter-published_on-to").fill("1974-05-01");
    await expect.poll(() => page.url()).toBe(`${web.url}/books?published_on_from=1971-01-01&published_on_to=1974-05-01`);
    await expect.poll(() => rows(page).count()).toBe(2);
    await page.getByTestId("filter-published_on-to").fill("1974-04-30");
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().textContent()).toContain("The Lathe of Heaven");
    await page.getByTestId("clear-filters").click();
    await page.getByTestId("search").fill("wolf");
    await page.waitForURL(`${web.url}/books?q=wolf`);
    await expect.poll(() => rows(page).count()).toBe(1);
    // Sorting by an integer column, descending on the second press; a shared link restores it.
    await page.getByTestId("search").fill("");
    await page.waitForURL(`${web.url}/books`);
    await page.getByTestId("sort-pages").click();
    await page.waitForURL(`${web.url}/books?sort=pages`);
    await page.getByTestId("sort-pages").click();
    await page.waitForURL(`${web.url}/books?sort=-pages`);
    // Books with a page count, largest first (where the store puts a book without one is its own business).
    const counted = async (p: Page) =>
      (await p.locator('[data-testid^="row-"] [data-column="pages"]').allTextContents()).filter((t) => t !== "—");
    await expect.poll(() => counted(page)).toEqual(["653", "388"]);
    const shared = await open("UTC");
    await shared.goto(`${web.url}/books?sort=-pages`);
    await expect.poll(() => counted(shared)).toEqual(["653", "388"]);
    expect(await shared.locator('th[aria-sort="descending"]').textContent()).toBe("Pages");
    await shared.context().close();
    // Booleans read Yes/No; the authors page filters by a boolean too.
    expect(await page.getByTestId(`row-${seed.wolf?.id}`).locator('[data-column="in_print"]').textContent()).toBe("No");
    await page.goto(`${web.url}/authors?active=false`);
    await expect.poll(() => rows(page).count()).toBe(1);
    await page.context().close();
  });

  it.each([
    // Wolf Hall was last borrowed at 2026-03-01 00:15 UTC (the test above): 2026-02-28 19:15 in
    // New York, 2026-03-01 09:15 in Tokyo. A date-time range is chosen in days of the browser's zone.
    ["America/New_York", "-05:00", 1],
    ["Asia/Tokyo", "+09:00", 0],
  ])("filters a date-time by a range of days in the browser's zone (%s)", async (zone, offset, onFeb28) => {
    const page = await open(zone);
    await page.goto(`${web.url}/books`);
    await expect.poll(() => rows(page).count()).toBe(3);
    await hydrated(page.getByTestId("filter-last_borrowed_at-from"));
    await page.getByTestId("filter-last_borrowed_at-from").fill("2026-02-28");
    const from = `last_borrowed_at_from=${encodeURIComponent(`2026-02-28T00:00:00${offset}`)}`;
    await expect.poll(() => page.url()).toBe(`${web.url}/books?${from}`);
    await page.getByTestId("filter-last_borrowed_at-to").fill("2026-02-28");
    const to = `last_borrowed_at_to=${encodeURIComponent(`2026-02-28T23:59:59.999${offset}`)}`;
    await expect.poll(() => page.url()).toBe(`${web.url}/books?${from}&${to}`);
    if (onFeb28 === 0) await expect.poll(() => page.getByTestId("empty-state").count()).toBe(1);
    else await expect.poll(() => rows(page).count()).toBe(onFeb28);
    // The next day holds it in Tokyo, not in New York.
    await page.getByTestId("filter-last_borrowed_at-to").fill("2026-03-01");
    await page.waitForURL((u) => u.search.includes("2026-03-01T23"));
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().textContent()).toContain("Wolf Hall");
    // The inputs show the chosen days; a reload restores them from the URL.
    await page.reload();
    expect(await page.getByTestId("filter-last_borrowed_at-from").inputValue()).toBe("2026-02-28");
    expect(await page.getByTestId("filter-last_borrowed_at-to").inputValue()).toBe("2026-03-01");
    await expect.poll(() => rows(page).count()).toBe(1);
    await page.context().close();
  });

  it("shows a failed rule at the fields it names, in words, with focus on the first", async () => {
    const page = await open("UTC");
    await page.goto(`${web.url}/books/new`);
    await expect.poll(() => page.getByTestId("field-author_id").locator("option").count()).toBe(3);
    await page.getByTestId("field-title").fill("A very short book");
    await page.getByTestId("field-author_id").selectOption({ label: "Hilary Mantel" });
    await page.getByTestId("field-pages").fill("10");
    await page.getByTestId("field-price").fill("99");
    await page.getByTestId("form-submit").click();
    await expect.poll(() => page.getByTestId("field-error-price").textContent()).toBe("Price above page count.");
    expect(await page.getByTestId("field-error-pages").textContent()).toBe("Price above page count.");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("field-pages");
    await page.getByTestId("field-price").fill("9");
    await page.getByTestId("form-submit").click();
    await page.waitForURL(`${web.url}/books`);
    await expect.poll(() => page.getByTestId("toasts").textContent()).toContain("Book “A very short book” created.");
    await page.context().close();
  });

  it("puts the API's refusal of a value the browser accepts on its field: aria-invalid, described, focused", async () => {
    const page = await open("UTC");
    await page.goto(`${web.url}/authors/new`);
    await page.getByTestId("field-full_name").fill("Octavia E. Butler");
    const email = page.getByTestId("field-email");
    // Well-formed to the browser's e-mail input, refused by the API (two dots in a row). `a@b`
    // no longer serves: the API takes a dotless domain as well-formed, as JSON Schema's format does.
    await email.fill("octavia..butler@example.com");
    expect(await email.evaluate((el: HTMLInputElement) => [el.type, el.validity.valid])).toEqual(["email", true]);
    await page.getByTestId("form-submit").click();
    await expect.poll(() => email.getAttribute("aria-invalid")).toBe("true");
    expect(await email.getAttribute("aria-describedby")).toBe("field-email-error");
    expect(await page.locator("#field-email-error").textContent()).toBe("Must be a valid e-mail address");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("field-email");
    expect(await page.getByTestId("form-error").textContent()).toContain("1 field needs attention: Email.");
    expect(page.url()).toBe(`${web.url}/authors/new`);
    expect((await api<{ items: Rec[] }>("GET", "/authors/?q=Octavia")).items).toEqual([]);
    // Corrected, the same form saves: the marks go and the record exists.
    await email.fill("octavia.butler@example.com");
    await page.getByTestId("form-submit").click();
    await page.waitForURL(`${web.url}/authors`);
    const saved = (await api<{ items: Rec[] }>("GET", "/authors/?q=Octavia")).items;
    expect(saved.map((a) => a.email)).toEqual(["octavia.butler@example.com"]);
    await api("DELETE", `/authors/${saved[0]?.id}`);
    await page.context().close();
  });

  it("passes axe and fits a 375 px phone on every page, light and dark", async () => {
    const found: string[] = [];
    for (const viewport of [
      { width: 1440, height: 900 },
      { width: 375, height: 812 },
    ]) {
      for (const scheme of ["light", "dark"] as const) {
        const page = await open("UTC", viewport);
        await page.emulateMedia({ colorScheme: scheme });
        for (const path of ["/", "/books", "/books/new", `/books/${seed.dispossessed?.id}`, "/authors", `/authors/${seed.le?.id}`]) {
          await page.goto(`${web.url}${path}`);
          await expect.poll(() => page.getByTestId("loading-state").count()).toBe(0);
          for (const v of await axeViolations(page))
            found.push(`${viewport.width}px ${scheme} ${path}: ${v.id} ${v.help} at ${v.targets.join(", ")}`);
          if (viewport.width === 375) expect(await hasHorizontalOverflow(page), path).toMatchObject({ overflow: false });
        }
        if (viewport.width === 375 && scheme === "light") {
          await page.goto(`${web.url}/books`);
          await expect.poll(() => rows(page).count()).toBeGreaterThan(0);
          await page.screenshot({ path: join(SHOTS, "library-phone-books.png"), fullPage: true });
        }
        if (viewport.width === 1440 && scheme === "dark") {
          await page.goto(`${web.url}/books`);
          await expect.poll(() => rows(page).count()).toBeGreaterThan(0);
          await page.screenshot({ path: join(SHOTS, "library-books-dark.png"), fullPage: true });
        }
        await page.context().close();
      }
    }
    expect(found).toEqual([]);
  });
});
