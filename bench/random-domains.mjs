#!/usr/bin/env node
// Property-based generation at scale: COUNT random valid domains (test/support/random-domain.ts),
// each through the pipeline of the suite's property test (test/support/random-pipeline.ts): validate,
// generate all targets, ruff check, ruff format --check, mypy, biome check, tsc, psql applies the
// schema, then the app on PostgreSQL and on memory passing its generated suite and a short
// schemathesis run. Prints each domain's failed steps, then per step the pass count and the median
// and slowest time, and writes nothing it keeps except the folders of failed domains.
//
//   node bench/random-domains.mjs [COUNT=10] [--seed N] [--max-examples N] [--keep]
//
// Needs what the full test tier needs (PostgreSQL, the venv); run it under
// `flock /tmp/charter-tests.lock` on a shared machine.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { register } from "tsx/esm/api";

register();
const fc = (await import("fast-check")).default;
const { randomDomain } = await import("../test/support/random-domain.ts");
const { runPipeline } = await import("../test/support/random-pipeline.ts");

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const positional = args.filter((a, i) => !a.startsWith("--") && !["--seed", "--max-examples"].includes(args[i - 1] ?? ""));
const COUNT = Number(positional[0] ?? 10);
const SEED = option("--seed", 20_261_125);
const MAX_EXAMPLES = option("--max-examples", 3);
const KEEP = args.includes("--keep");

const root = mkdtempSync(join(tmpdir(), "charter-bench-random-"));
// One domain in eight carries a name past PostgreSQL's 63 bytes: it passes when validation refuses it.
const domains = fc.sample(randomDomain({ tooLong: 0.125 }), { numRuns: COUNT, seed: SEED });
console.log(`${COUNT} random domains, seed ${SEED}, schemathesis --max-examples ${MAX_EXAMPLES}`);

/** step -> { ok, runs, ms[] } */
const steps = new Map();
let passed = 0;
const t0 = Date.now();
for (const [i, d] of domains.entries()) {
  const dir = join(root, String(i));
  const started = Date.now();
  const results = await runPipeline(d.files, {
    tag: `bench${i}`,
    root: dir,
    maxExamples: MAX_EXAMPLES,
    seed: SEED,
    mypyCache: join(root, ".mypy"),
    refusal: d.refusal,
  });
  for (const r of results) {
    const s = steps.get(r.step) ?? { ok: 0, runs: 0, ms: [] };
    s.runs++;
    if (r.ok) s.ok++;
    s.ms.push(r.ms);
    steps.set(r.step, s);
  }
  const failed = results.filter((r) => !r.ok).map((r) => r.step);
  const names = d.plan.entities.map((e) => e.name).join(", ") + (d.refusal ? `; refused: ${d.refusal.name}` : "");
  if (failed.length === 0) {
    passed++;
    if (!KEEP) rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `domain ${String(i).padStart(3)} ${failed.length === 0 ? "pass" : "FAIL"} ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  [${names}]${failed.length ? `  failed: ${failed.join(", ")} (logs in ${dir})` : ""}`,
  );
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? 0;
};
console.log(`\nstep                          pass/runs   median ms   max ms`);
for (const [name, s] of steps) {
  console.log(
    `${name.padEnd(30)} ${`${s.ok}/${s.runs}`.padStart(9)} ${String(median(s.ms)).padStart(11)} ${String(Math.max(...s.ms)).padStart(8)}`,
  );
}
const total = (Date.now() - t0) / 1000;
console.log(
  `\ndomains passing every step: ${passed}/${COUNT}; ${total.toFixed(0)} s in all, ${(total / Math.max(COUNT, 1)).toFixed(1)} s per domain`,
);
if (passed === COUNT && !KEEP) rmSync(root, { recursive: true, force: true });
process.exit(passed === COUNT ? 0 : 1);
