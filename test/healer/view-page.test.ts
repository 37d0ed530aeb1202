import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { Healer } from "../../src/healer/index.js";
import { buildHealerServer } from "../../src/healer/server/app.js";
import { launchChromium } from "../support/chromium.js";
import { FakeLlm } from "../support/fake-llm.js";
import { brokenShop, listFiles, makeProject } from "./helpers.js";

/*
 * The ticket view page as a person uses it: headless Chromium opens the link of the `proposed`
 * notification, reads the change, and approves or rejects through the forms.
 */

const CUSTOMER = "domains/shop/entities/customer.contract.yaml";

let fake: FakeLlm;
let browser: Browser;
beforeAll(async () => {
  fake = await FakeLlm.start();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await fake.close();
});

const started: { app: FastifyInstance; healer: Healer }[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) {
    await s.app.close();
    await s.healer.close();
  }
  fake.reset();
});

/** A served project whose customer contract lacks a field type, with one proposal waiting. */
async function proposedTicket(
  edit: (src: string) => string = (s) => s,
  pageOptions: { bypassCSP?: boolean } = {},
): Promise<{ url: string; root: string; id: string; page: Page }> {
  const root = makeProject(brokenShop("missing_type"));
  const file = join(root, CUSTOMER);
  writeFileSync(file, edit(readFileSync(file, "utf8")));
  const healer = new Healer({ projectRoot: root, console: null, env: fake.env() });
  const app = buildHealerServer({ healer });
  await app.listen({ host: "127.0.0.1", port: 0 });
  started.push({ app, healer });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const source = readFileSync(file, "utf8");
  fake.reply({
    json: {
      contract: source.replace("    email:\n      required: true", "    email:\n      type: email\n      required: true"),
      explanation: "An e-mail address field needs the type email.",
    },
  });
  const finding = checkDomain(join(root, "domains")).findings.find((f) => f.severity === "error");
  const r = await fetch(`${url}/healer/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      source: "validation",
      contract_fqn: "entity/shop/customer",
      error: finding?.message,
      stacktrace: "Traceback <b>not bold</b>\n  at line 1",
    }),
  });
  const { ticket_id, status } = (await r.json()) as { ticket_id: string; status: string };
  expect(status).toBe("proposed");
  const page = await browser.newPage(pageOptions);
  page.setDefaultTimeout(15_000);
  await page.goto(`${url}/healer/tickets/${ticket_id}/view`);
  return { url, root, id: ticket_id, page };
}

describe("the ticket view page in Chromium", () => {
  it("shows the proposal and approves it through the form: applied, contract changed, backend regenerated", async () => {
    const { url, root, id, page } = await proposedTicket();
    const before = readFileSync(join(root, CUSTOMER), "utf8");
    await expect(page.locator("h1 .badge").textContent()).resolves.toBe("proposed");
    await expect(page.locator("#changes li").first().textContent()).resolves.toContain("/spec/fields/email/type = email");
    await expect(page.locator("#method").textContent()).resolves.toBe("llm_structural");
    await expect(page.locator("#confidence").textContent()).resolves.toBe("0.7");
    await expect(page.locator("#verification").textContent()).resolves.toMatch(/domain validates.*every target generates/s);
    await expect(page.locator("#stacktrace").textContent()).resolves.toContain("Traceback <b>not bold</b>");
    expect(await page.locator("#stacktrace b").count()).toBe(0);

    await page.click("#approve");
    await page.waitForURL(`${url}/healer/tickets/${id}/view?done=applied`);
    await expect(page.locator("h1 .badge").textContent()).resolves.toBe("applied");
    await expect(page.locator("#flash").textContent()).resolves.toContain("applied");
    expect(await page.locator("#approve").count()).toBe(0);
    expect(await page.locator("#reject").count()).toBe(0);
    const after = readFileSync(join(root, CUSTOMER), "utf8");
    expect(after).not.toBe(before);
    expect(after).toContain("      type: email\n");
    expect(checkDomain(join(root, "domains")).errors).toBe(0);
    expect(listFiles(join(root, "runtime", "backend"))).toContain("app/main.py");
    const models = listFiles(join(root, "runtime", "backend", "app")).filter((f) => f.includes("customer"));
    expect(models.length).toBeGreaterThan(0);
    await page.close();
  });

  it("rejects with a reason; the buttons are gone and the contract is untouched", async () => {
    const { root, page, id, url } = await proposedTicket();
    const before = readFileSync(join(root, CUSTOMER), "utf8");
    await page.fill("#reason", "The field should be optional <really>");
    await page.click("#reject");
    await page.waitForURL(`${url}/healer/tickets/${id}/view?done=rejected`);
    await expect(page.locator("h1 .badge").textContent()).resolves.toBe("rejected");
    await expect(page.locator("#note").textContent()).resolves.toContain("The field should be optional <really>");
    expect(await page.locator("#approve").count()).toBe(0);
    expect(await page.locator("#reject-form").count()).toBe(0);
    expect(readFileSync(join(root, CUSTOMER), "utf8")).toBe(before);
    // The index lists it with a link back to the view.
    await page.goto(`${url}/healer`);
    await page.click(`a[href="/healer/tickets/${id}/view"]`);
    await expect(page.locator("h1 .badge").textContent()).resolves.toBe("rejected");
    await page.close();
  });

  it("a contract holding <script> is shown escaped and never runs", async () => {
    const { page } = await proposedTicket((src) =>
      src.replace(
        "description: A customer of the shop",
        'description: "<script>window.__pwned = 1</script><img src=x onerror=\\"window.__pwned=2\\">"',
      ),
    );
    await page.click("#after summary");
    await expect(page.locator("#after pre").textContent()).resolves.toContain("<script>window.__pwned = 1</script>");
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("main script").count()).toBe(0);
    expect(await page.locator("main img").count()).toBe(0);
    const html = await page.content();
    expect(html).toContain("&lt;script&gt;window.__pwned = 1&lt;/script&gt;");
    await page.close();
  });

  it("reads in the order of a decision and is operable by keyboard: skip link, Tab to Approve, Enter, the result flashes", async () => {
    const { url, id, page } = await proposedTicket((s) => s, { bypassCSP: true });
    // What approving does first, then decision and diff, then the error, then the trace and the full contract, collapsed.
    const order = await page.$$eval("main > section, main > details", (els) => els.map((e) => e.id));
    expect(order).toEqual(["consequences", "decision", "diff", "error-section", "trace", "after"]);
    expect(await page.$eval("#trace", (d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await page.$eval("#after", (d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await page.locator("#diff pre").isVisible()).toBe(true);
    await expect(page.locator("#diff pre .add").first().textContent()).resolves.toBe("+      type: email");
    await expect(page.locator("#decision #verification").textContent()).resolves.toMatch(/domain validates.*every target generates/s);
    const headings = await page.$$eval("h1, h2", (hs) => hs.map((h) => `${h.tagName} ${h.textContent?.trim()}`));
    expect(headings.slice(0, 5)).toEqual([
      `H1 Ticket ${id} proposed`,
      "H2 What approving does",
      "H2 Decision",
      "H2 Diff of domains/shop/entities/customer.contract.yaml",
      "H2 Error",
    ]);
    await expectNoSeriousViolations(page);

    // The first Tab reaches the skip link, shown while focused; Enter jumps to the decision.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to the decision");
    expect((await page.locator(".skip").boundingBox())?.y).toBeGreaterThanOrEqual(0);
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("decision");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("approve");
    // The focus is visible: an outline of its own, not the browser's default alone.
    const outline = await page.$eval("#approve", (b) => {
      const st = getComputedStyle(b);
      return `${st.outlineStyle} ${st.outlineWidth}`;
    });
    expect(outline).toBe("solid 3px");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${url}/healer/tickets/${id}/view?done=applied`);
    await expect(page.locator("#flash").textContent()).resolves.toBe("Approved: the fix was applied and the code regenerated.");
    expect(await page.locator("#flash").getAttribute("role")).toBe("status");
    await expect(page.locator("h1 .badge").textContent()).resolves.toBe("applied");
    await expectNoSeriousViolations(page);

    await page.goto(`${url}/healer`);
    await expect(page.locator("#tickets a").first().getAttribute("href")).resolves.toBe(`/healer/tickets/${id}/view`);
    await expectNoSeriousViolations(page);
    await page.close();
  });

  it("the index lists what waits for a decision first", async () => {
    const { url, id, page } = await proposedTicket((s) => s, { bypassCSP: true });
    await page.goto(`${url}/healer`);
    const order = await page.$$eval("main h2", (hs) => hs.map((h) => h.textContent));
    expect(order).toEqual(["Waiting for a decision (1)", "All tickets"]);
    await expect(page.locator("#waiting tbody a").getAttribute("href")).resolves.toBe(`/healer/tickets/${id}/view`);
    await expectNoSeriousViolations(page);
    await page.close();
  });
});

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe-core on the page as it stands: no serious or critical violation of any rule. */
async function expectNoSeriousViolations(page: Page): Promise<void> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run: (ctx: Document) => Promise<{ violations: { id: string; impact: string; nodes: { html: string }[] }[] }> };
      }
    ).axe;
    const result = await axe.run(document);
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.html).slice(0, 3) }));
  });
  expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
}
