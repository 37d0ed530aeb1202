#!/usr/bin/env node
// Time of `charter forge validate` + `forge compile` on synthetic domains of growing size, each in a
// fresh process (what a user waits for). Prints a table; the targets are < 1.5 s at 1,000 entities
// (validate + compile), < 3 s to validate 10,000 entities, growing linearly, < 3 s to validate 20,000
// contracts (10,000 entities, each with a route), and the same report bytes on a re-run. Run after
// `npm run build`.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { writeSyntheticDomain } from "./synthetic-domain.mjs";

const root = resolve(import.meta.dirname, "..");
const cli = join(root, "dist/cli/charter.js");
if (!existsSync(cli)) execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });

const outputs = new Map();

function timeRun(args, runs = 3) {
  const best = [];
  for (let k = 0; k < runs; k++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 1 << 30 });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`charter ${args.join(" ")} failed:\n${r.stdout.slice(0, 2000)}\n${r.stderr.slice(0, 2000)}`);
    const key = args.join(" ");
    if (outputs.has(key) && outputs.get(key) !== r.stdout) outputs.set(key, null);
    else if (!outputs.has(key)) outputs.set(key, r.stdout);
    best.push(ms);
  }
  return Math.min(...best);
}

const sizes = [125, 250, 500, 1000, 10000];
const rows = [];
const work = mkdtempSync(join(tmpdir(), "charter-bench-"));
try {
  const baseline = timeRun(["--version"]);
  for (const n of sizes) {
    const dir = join(work, `d${n}`);
    writeSyntheticDomain(dir, n);
    const validate = timeRun(["forge", "validate", dir, "--format", "json"], n > 1000 ? 2 : 3);
    const compile = timeRun(["forge", "compile", dir, "--ir", join(work, `ir${n}.json`)], n > 1000 ? 2 : 3);
    rows.push({ n, validate, compile });
  }
  const routed = join(work, "routed");
  writeSyntheticDomain(routed, 10000, { workflow: 0, route: 1, page: 0 });
  const validateRouted = timeRun(["forge", "validate", routed, "--format", "json"], 2);
  console.log(`node startup + CLI load (charter --version): ${baseline.toFixed(0)} ms`);
  console.log("entities  validate (ms)  validate+compile+write IR (ms)  ms/entity (compile, minus startup)");
  for (const r of rows) {
    console.log(
      `${String(r.n).padStart(8)}  ${r.validate.toFixed(0).padStart(13)}  ${r.compile.toFixed(0).padStart(30)}  ${((r.compile - baseline) / r.n).toFixed(3).padStart(10)}`,
    );
  }
  const last = rows.find((r) => r.n === 1000);
  const big = rows.at(-1);
  const ratio = (last.compile - baseline) / (rows[0].compile - baseline) / (last.n / rows[0].n);
  console.log(
    `target: validate + compile of 1,000 entities < 1500 ms in a fresh process: ${last.compile.toFixed(0)} ms -> ${last.compile < 1500 ? "MET" : "MISSED"}`,
  );
  console.log(`growth: time per entity at ${last.n} vs ${rows[0].n} entities = ${ratio.toFixed(2)}x (1.0 = linear)`);
  console.log(
    `target: validate ${big.n} entities cold < 3000 ms: ${big.validate.toFixed(0)} ms -> ${big.validate < 3000 ? "MET" : "MISSED"}`,
  );
  console.log(
    `target: validate 20,000 contracts (10,000 entities and 10,000 routes) cold < 3000 ms: ${validateRouted.toFixed(0)} ms -> ${validateRouted < 3000 ? "MET" : "MISSED"}`,
  );
  const same = [...outputs.values()].every((o) => o !== null);
  console.log(`byte-identical reports on re-run: ${same ? "yes" : "NO"} (${outputs.size} commands, each run 2-3 times)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
