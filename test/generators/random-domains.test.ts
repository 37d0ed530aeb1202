import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
 * Domains the bench's larger draws found broken, kept here once fixed: [seed, index in that draw].
 * - 5151 #3: one entity and no Route, so an empty ROUTE_CONTRACTS that mypy could not type.
 * - 6262 #5: a number enum holding a fraction (-274.4), a Literal mypy refuses.
 * - 7373 #5: a guard `len(this) >= 1` on an e-mail field, which the generated suite broke with an
 *   empty text the API refuses at create.
 */
const FOUND: readonly (readonly [number, number])[] = [
  [5151, 3],
  [6262, 5],
  [7373, 5],
];
const DOMAINS = [
  ...fc.sample(randomDomain(), { numRuns: COUNT, seed: SEED }),
  ...FOUND.map(([seed, index]) => {
    const found = fc.sample(randomDomain(), { numRuns: index + 1, seed })[index];
    if (found === undefined) throw new Error(`no domain ${index} in the draw of seed ${seed}`);
    return found;
  }),
];

const root = mkdtempSync(join(tmpdir(), "charter-random-"));
/** Set by a failure: the generated app and every step's output stay for reading. */
let keep = false;
afterAll(() => {
  if (!keep) rmSync(root, { recursive: true, force: true });
});

describe("random valid domains", () => {
  it.each(DOMAINS.map((d, i) => [i, d.plan.entities.map((e) => e.name).join(", "), d] as const))(
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
