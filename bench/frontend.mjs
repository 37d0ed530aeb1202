#!/usr/bin/env node
// First Load JS of every route of the generated helpdesk frontend (target, issues 11 and 16: at
// most 140 kB gzip on every table, form and detail page). Generates the frontend, installs its dependencies once into .cache/nextjs/ (keyed by the
// generated package.json), runs `next build`, and reads the sizes from the build manifests (Next
// 16 no longer prints them). Usage:
//   node bench/frontend.mjs [DOMAIN_DIR]      build, then measure
//   node bench/frontend.mjs --app APP_DIR     measure an app that is already built
//   ... --save FILE                            also write the sizes as JSON
//   ... --compare FILE                         print them beside those of an earlier --save (before/after)
// Run after `npm run build` (it uses dist/), or it builds Charter first.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { buildNextApp, firstLoadJs, formatSizes, frameworkJs, prepareNextApp } from "../test/frontend/support/next-app.mjs";

const root = resolve(import.meta.dirname, "..");
const TARGET_KB = 140;
const argv = process.argv.slice(2);
/** Takes `--name VALUE` out of the arguments. */
function option(name) {
  const i = argv.indexOf(name);
  if (i < 0) return null;
  const [, value] = argv.splice(i, 2);
  return value ?? null;
}
const saveTo = option("--save");
const compareWith = option("--compare");
const args = argv;

let appDir;
if (args[0] === "--app") {
  appDir = resolve(args[1] ?? ".");
} else {
  const domain = resolve(args[0] ?? join(root, "examples/helpdesk"));
  const dist = join(root, "dist");
  if (!existsSync(join(dist, "generators/nextjs/index.js")))
    execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
  const { checkDomain } = await import(pathToFileURL(join(dist, "compiler/index.js")).href);
  const { generateNextjs } = await import(pathToFileURL(join(dist, "generators/nextjs/index.js")).href);
  const { ir, findings } = checkDomain(domain);
  if (!ir) throw new Error(`${domain} does not compile:\n${findings.map((f) => f.message).join("\n")}`);
  const log = (line) => process.stderr.write(`${line}\n`);
  ({ appDir } = prepareNextApp(generateNextjs(ir), { log, slot: "bench" }));
  const build = buildNextApp(appDir, { apiUrl: "http://localhost:8000", log });
  if (build.built) process.stderr.write(`next build: ${(build.ms / 1000).toFixed(1)} s\n`);
}

const sizes = firstLoadJs(appDir);
process.stdout.write(`${formatSizes(sizes)}\n`);
if (saveTo)
  writeFileSync(
    saveTo,
    `${JSON.stringify(
      sizes.map(({ route, gzipBytes }) => ({ route, gzipBytes })),
      null,
      2,
    )}\n`,
  );
if (compareWith) {
  const before = new Map(JSON.parse(readFileSync(compareWith, "utf8")).map((s) => [s.route, s.gzipBytes]));
  const kb = (n) => `${(n / 1000).toFixed(1)} kB`;
  process.stdout.write(`\n${"Route".padEnd(16)} ${"before".padStart(9)} ${"after".padStart(9)} ${"change".padStart(9)}\n`);
  for (const s of sizes) {
    const b = before.get(s.route);
    const change = b === undefined ? "new" : `${s.gzipBytes - b >= 0 ? "+" : ""}${((s.gzipBytes - b) / 1000).toFixed(1)} kB`;
    process.stdout.write(
      `${s.route.padEnd(16)} ${(b === undefined ? "-" : kb(b)).padStart(9)} ${kb(s.gzipBytes).padStart(9)} ${change.padStart(9)}\n`,
    );
  }
}
const over = sizes.filter((s) => s.gzipBytes > TARGET_KB * 1000);
const largest = Math.max(...sizes.map((s) => s.gzipBytes));
const runtime = frameworkJs(appDir);
const smallest = Math.min(...sizes.map((s) => s.gzipBytes));
process.stdout.write(`\nshared by every route (Next.js + React runtime, the build's root main files): ${(runtime / 1000).toFixed(1)} kB\n`);
process.stdout.write(
  `app share (route minus runtime): ${((smallest - runtime) / 1000).toFixed(1)}-${((largest - runtime) / 1000).toFixed(1)} kB (an empty Next 16 page with one client component measured 134.8 kB, runtime 131.1 kB, on 2026-11-23)\n`,
);
// Where the app share goes: chunks every route loads besides the runtime (Next's own client
// components of the layout tree, about 3.3 kB of the 134.8 kB above, plus the layout's client
// islands: drawer, nav links, theme toggle, toasts; the shell itself renders on the server) and
// the chunks of each page alone (its islands: filter bar, detail actions, form submit, board loader).
const gz = (f) => gzipSync(readFileSync(join(appDir, ".next", f)), { level: 9 }).length;
const everywhere = sizes.reduce((common, s) => common.filter((f) => s.files.includes(f)), sizes[0]?.files ?? []);
const layoutBytes = everywhere.reduce((n, f) => n + gz(f), 0) - runtime;
process.stdout.write(`chunks every route loads besides the runtime (layout tree and app shell): ${(layoutBytes / 1000).toFixed(1)} kB\n`);
for (const s of sizes) {
  const own = s.files.filter((f) => !everywhere.includes(f)).reduce((n, f) => n + gz(f), 0);
  process.stdout.write(`  ${s.route.padEnd(16)} page's own chunks ${(own / 1000).toFixed(1)} kB\n`);
}
process.stdout.write(
  `largest route: ${(largest / 1000).toFixed(1)} kB; target <= ${TARGET_KB} kB per page: ${over.length === 0 ? "met" : `missed by ${over.map((s) => s.route).join(", ")}`}\n`,
);
