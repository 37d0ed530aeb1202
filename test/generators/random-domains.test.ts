import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { randomDomain } from "../support/random-domain.js";
import { runPipeline } from "../support/random-pipeline.js";

/**
 * Property: every valid domain generates a working, formatter-clean app. A few random domains
 * (fixed seed, so a failure found once is found again; bench/random-domains.mjs draws many more)
 * each go through the whole pipeline of test/support/random-pipeline.ts, and every step must pass.
 */
const SEED = 20_261_125;
const COUNT = 3;
/**
 * Domains the bench's larger draws found broken, kept as files once fixed (their README says what
 * each one broke): a change to the draw must not lose them.
 */
const FOUND_DIR = resolve("test/fixtures/random-found");
const FOUND = readdirSync(FOUND_DIR, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => ({ name: e.name, files: contractFiles(join(FOUND_DIR, e.name)) }));
const DOMAINS = [
  ...fc.sample(randomDomain(), { numRuns: COUNT, seed: SEED }).map((d) => ({
    name: d.plan.entities.map((e) => e.name).join(", "),
    files: d.files,
  })),
  ...FOUND,
];

/** The contract files of a folder, by their paths inside it. */
function contractFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const sub of readdirSync(dir, { withFileTypes: true })) {
    if (!sub.isDirectory()) continue;
    for (const f of readdirSync(join(dir, sub.name)).sort()) files[`${sub.name}/${f}`] = readFileSync(join(dir, sub.name, f), "utf8");
  }
  return files;
}

const root = mkdtempSync(join(tmpdir(), "charter-random-"));
/** Set by a failure: the generated app and every step's output stay for reading. */
let keep = false;
afterAll(() => {
  if (!keep) rmSync(root, { recursive: true, force: true });
});

describe("random valid domains", () => {
  it.each(DOMAINS.map((d, i) => [i, d.name, d] as const))(
    "domain %i (%s): validates, generates, passes the linters, its own suite and schemathesis",
    async (i, _names, d) => {
      const results = await runPipeline(d.files, {
        tag: `t${i}`,
        root: join(root, String(i)),
        maxExamples: 2,
        seed: SEED,
        mypyCache: join(root, ".mypy"),
        log: (line) => process.stderr.write(`[random ${i}] ${line}\n`),
      });
      const failed = results.filter((r) => !r.ok);
      const contracts = Object.entries(d.files)
        .map(([path, text]) => `# ${path}\n${text}`)
        .join("\n");
      const report = failed.map((r) => `--- ${r.step} failed:\n${r.output}`).join("\n");
      if (failed.length > 0) keep = true;
      expect(
        failed.map((r) => r.step),
        `${report}\n\nThe domain (app and logs kept in ${root}/${i}):\n${contracts}`,
      ).toEqual([]);
      // Nothing skipped: both apps ran their suite and schemathesis.
      expect(results.map((r) => r.step)).toContain("schemathesis on memory");
      expect(results.map((r) => r.step)).toContain("schemathesis on postgres");
    },
    600_000,
  );
});
