// Lighthouse scores of the generated helpdesk frontend (npm `lighthouse`, Debian's Chromium): the
// list page (table), the kanban page and a form, each with Lighthouse's mobile and desktop
// settings. Targets (issue 16): accessibility 100, best practices >= 95, performance >= 90 on
// mobile. The backend is the generated FastAPI app on the memory store with auth off, seeded with
// 40 customers and 120 tickets through its API; the frontend is a production `next build`.
//   node --import tsx bench/lighthouse.ts        (or: npm run bench -- lighthouse)
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";
import { checkDomain } from "../src/compiler/index.js";
import { generateNextjs } from "../src/generators/nextjs/index.js";
import { buildNextApp, prepareNextApp, startNextApp } from "../test/frontend/support/next-app.mjs";
import { startGeneratedBackend } from "../test/support/backend.js";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../test/support/chromium.js";
import { freePort } from "../test/support/net.js";

const root = resolve(import.meta.dirname, "..");
const domain = join(root, "examples/helpdesk");
const say = (line: string) => process.stderr.write(`${line}\n`);
const outDir = mkdtempSync(join(tmpdir(), "charter-lighthouse-"));

const backend = await startGeneratedBackend({ domainDir: domain, outDir, backend: "memory", env: { AUTH_ENABLED: "false" } });
const web = await (async () => {
  const { ir, findings } = checkDomain(domain);
  if (!ir) throw new Error(findings.map((f) => f.message).join("\n"));
  const { appDir } = prepareNextApp(generateNextjs(ir), { log: say, slot: "lighthouse" });
  buildNextApp(appDir, { apiUrl: backend.url, log: say });
  return startNextApp(appDir, await freePort());
})();
const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM_PATH, chromeFlags: CHROMIUM_ARGS });

try {
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${backend.url}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as { id: string };
  };
  const customers = [];
  for (let i = 1; i <= 40; i++) customers.push(await post("/customers/", { name: `Customer ${i}`, email: `c${i}@example.com` }));
  const priorities = ["low", "medium", "high"];
  for (let i = 1; i <= 120; i++) {
    await post("/tickets/", { title: `Ticket number ${i}`, customer_id: customers[i % 40]?.id, priority: priorities[i % 3] });
  }

  const pages = [
    ["list (table)", "/tickets?view=table"],
    ["kanban", "/tickets"],
    ["form", "/tickets/new"],
  ] as const;
  const rows: string[] = [];
  const misses: string[] = [];
  for (const [label, path] of pages) {
    for (const formFactor of ["mobile", "desktop"] as const) {
      const result = await lighthouse(
        `${web.url}${path}`,
        { port: chrome.port, output: "json", logLevel: "error", onlyCategories: ["performance", "accessibility", "best-practices"] },
        formFactor === "desktop" ? desktopConfig : undefined,
      );
      const cats = result?.lhr.categories;
      const score = (k: string) => Math.round((cats?.[k]?.score ?? 0) * 100);
      const perf = score("performance");
      const a11y = score("accessibility");
      const bp = score("best-practices");
      const metrics = ["first-contentful-paint", "largest-contentful-paint", "total-blocking-time", "cumulative-layout-shift"]
        .map((id) => result?.lhr.audits[id]?.displayValue ?? "?")
        .join(" / ");
      rows.push(
        `${label.padEnd(14)} ${formFactor.padEnd(8)} ${String(perf).padStart(11)} ${String(a11y).padStart(13)} ${String(bp).padStart(14)}   ${metrics}`,
      );
      if (a11y < 100) misses.push(`${label} ${formFactor}: accessibility ${a11y}`);
      if (bp < 95) misses.push(`${label} ${formFactor}: best practices ${bp}`);
      if (formFactor === "mobile" && perf < 90) misses.push(`${label} mobile: performance ${perf}`);
      for (const audit of Object.values(result?.lhr.audits ?? {})) {
        if (audit.score !== null && audit.score < 1 && audit.scoreDisplayMode === "binary")
          say(`  ${label} ${formFactor}: ${audit.id} failed`);
      }
    }
  }
  process.stdout.write(`page           form     performance accessibility best-practices   FCP / LCP / TBT / CLS\n${rows.join("\n")}\n`);
  // Lighthouse's mobile run slows the CPU 4x on top of whatever else the machine is doing.
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  process.stdout.write(`load average after the runs: ${load} on ${cpus().length} cores\n`);
  process.stdout.write(
    `targets (accessibility 100, best practices >= 95, performance >= 90 on mobile): ${misses.length === 0 ? "all met" : `missed: ${misses.join("; ")}`}\n`,
  );
} finally {
  await chrome.kill();
  await web.stop();
  await backend.stop();
  rmSync(outDir, { recursive: true, force: true });
}
