import { rmSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { writeDomain } from "../support/domain.js";
import { randomDomain } from "../support/random-domain.js";

/**
 * The arbitrary of the generation property test (test/generators/random-domains.test.ts) draws
 * valid domains only, every name class included: a finding here means the arbitrary or the
 * compiler is wrong, and fast-check shrinks the domain to a small counterexample.
 */
describe("random domains", () => {
  it("always validate, with no error finding", () => {
    fc.assert(
      fc.property(randomDomain(), ({ files }) => {
        const dir = writeDomain(files);
        const { ir, findings } = checkDomain(dir);
        rmSync(dir, { recursive: true, force: true });
        const errors = findings.filter((f) => f.severity !== "warning").map((f) => `${f.file}: ${f.message}`);
        expect(errors).toEqual([]);
        expect(ir?.entities.length).toBeGreaterThan(0);
      }),
      { numRuns: 150, seed: 20_261_125 },
    );
  }, 120_000);
});
