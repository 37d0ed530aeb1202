import { type Browser, chromium, type Locator } from "playwright-core";
import { needsFullTier } from "./tiers.js";

/** Debian's Chromium (or CHROMIUM_PATH); tests never download a browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Headless, sandbox-free and quiet: nothing reaches out to the network on its own. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launchChromium(): Promise<Browser> {
  needsFullTier("Chromium");
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/**
 * Waits until React has hydrated the element: a server-rendered input takes typing before then, and
 * its onChange never runs for it (a filter typed too early changes nothing). React marks each
 * element it owns with a `__reactProps$…` key once it has hydrated it.
 */
export async function hydrated(locator: Locator, timeout = 15_000): Promise<void> {
  const element = await locator.first().elementHandle({ timeout });
  await locator.page().waitForFunction((el) => Object.keys(el).some((k) => k.startsWith("__reactProps$")), element, { timeout });
}
