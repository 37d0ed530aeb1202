import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { launchChromium } from "../support/chromium.js";

/*
 * /docs and /redoc of the generated backend in headless Chromium with the internet cut off: every
 * request to a host other than 127.0.0.1 is aborted (and recorded), so a page that still loaded
 * anything from a CDN would stay blank and the test would name what it asked for.
 */
describe("generated FastAPI backend: API documentation without internet", () => {
  let root: string;
  let app: RunningBackend;
  let browser: Browser;
  let page: Page;
  const blocked: string[] = [];
  const refused: string[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "charter-docs-offline-"));
    app = await startGeneratedBackend({ domainDir: "examples/helpdesk", outDir: join(root, "out"), backend: "memory" });
    browser = await launchChromium();
    const context = await browser.newContext();
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.protocol === "data:" || url.hostname === "127.0.0.1") return route.continue();
      blocked.push(url.href);
      return route.abort("internetdisconnected");
    });
    page = await context.newPage();
    // What the pages' Content-Security-Policy refused (ReDoc's remote logo, say): not a request, but
    // recorded, so the test shows where it went.
    page.on("console", (m) => {
      if (m.type() === "error" && m.text().includes("Content Security Policy")) refused.push(m.text());
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("renders Swagger UI's operations from the app's own files", async () => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${app.url}/docs`);
    await page.locator(".opblock").first().waitFor({ timeout: 30_000 });
    expect(await page.locator(".opblock").count()).toBeGreaterThan(10);
    expect(await page.locator(".opblock-summary-path").allTextContents()).toContain("/tickets");
    expect(await page.locator(".info .title").textContent()).toContain("Helpdesk API");
    expect(errors).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it("renders ReDoc from the app's own files", async () => {
    await page.goto(`${app.url}/redoc`);
    await page.locator(".api-content h1").first().waitFor({ timeout: 30_000 });
    expect(await page.locator(".api-content h1").first().textContent()).toContain("Helpdesk API");
    // The side menu lists the operations, read from the app's /openapi.json.
    await expect.poll(() => page.locator('[role="menuitem"], li[data-item-id]').count()).toBeGreaterThan(10);
    expect(blocked).toEqual([]);
    // The one thing ReDoc asks for elsewhere, its "by Redocly" logo, is stopped by the page itself.
    await expect.poll(() => refused.join("\n")).toContain("cdn.redoc.ly");
    expect(refused.join("\n")).not.toMatch(/redoc\.standalone|openapi\.json/);
  });

  it("serves the bundles with their types, and keeps the pages out of the API document", async () => {
    const js = await fetch(`${app.url}/static/docs/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    const docs = await fetch(`${app.url}/docs`);
    expect(docs.headers.get("content-security-policy")).toContain("default-src 'self'");
    const css = await fetch(`${app.url}/static/docs/swagger-ui.css`);
    expect(css.headers.get("content-type")).toMatch(/text\/css/);
    const doc = (await (await fetch(`${app.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/docs") || p.startsWith("/redoc") || p.startsWith("/static"))).toEqual([]);
  });
});
