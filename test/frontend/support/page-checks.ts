import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const require = createRequire(import.meta.url);
const AXE = require.resolve("axe-core/axe.min.js");

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2.0-2.2 A and AA rules plus best practices) on the page as it is now and
 * returns the serious and critical violations, one line per rule and element.
 */
export async function axeViolations(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: AXE });
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: unknown[] }> } }).axe;
    return axe.run(document, { resultTypes: ["violations"] });
  });
  const out: AxeFinding[] = [];
  for (const v of results.violations as { id: string; impact: string; help: string; nodes: { target: string[] }[] }[]) {
    if (v.impact !== "serious" && v.impact !== "critical") continue;
    out.push({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) });
  }
  return out;
}

/** Whether the document scrolls sideways (what a phone user would have to do to read the page). */
export async function hasHorizontalOverflow(page: Page): Promise<{ overflow: boolean; scrollWidth: number; width: number }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const scrollWidth = document.documentElement.scrollWidth;
    return { overflow: scrollWidth > width, scrollWidth, width };
  });
}

/** The text of the element that has the keyboard focus, with its test id, for journey assertions. */
export async function focused(page: Page): Promise<{ testId: string | null; tag: string; text: string; id: string }> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return {
      testId: el?.getAttribute("data-testid") ?? null,
      tag: el?.tagName.toLowerCase() ?? "",
      text: el?.textContent?.trim() ?? "",
      id: el?.id ?? "",
    };
  });
}
