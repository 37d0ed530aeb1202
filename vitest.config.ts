import { delimiter, resolve } from "node:path";
import { defineConfig } from "vitest/config";
import { FULL_TIER_TESTS, TIER_VARIABLE, UNIT_FILES } from "./test/support/tiers.js";

// Two tiers (test/support/tiers.ts says which test goes where): `vitest run --project unit` needs
// only Node; `--project full` needs PostgreSQL, Python and Chromium; plain `vitest run` runs both.
const setupFiles = ["test/support/tier-setup.ts"];
for (const file of Object.keys(FULL_TIER_TESTS)) {
  if (!UNIT_FILES.includes(file)) throw new Error(`test/support/tiers.ts: ${file} of FULL_TIER_TESTS must be in UNIT_FILES by name`);
}

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 600_000,
    // End-to-end suites start servers on fixed-per-suite ports and build projects; two cores here.
    maxWorkers: 2,
    // expect.poll waits on pages and background work (server-rendered pages, the dispatcher); its
    // default of 1 s is shorter than a page load on this two-core machine under the suite's load.
    expect: { poll: { timeout: 10_000 } },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: UNIT_FILES,
          setupFiles,
          // Python, psql and Chromium started directly (not through test/support) find a stand-in
          // that fails with "needs the full tier" instead.
          env: {
            [TIER_VARIABLE]: "unit",
            PATH: `${resolve("test/support/full-tier-only")}${delimiter}${process.env.PATH ?? ""}`,
          },
        },
      },
      {
        extends: true,
        test: {
          name: "full",
          include: ["test/**/*.test.ts"],
          // Files split between the tiers run here too, for the tests FULL_TIER_TESTS lists.
          exclude: UNIT_FILES.filter((f) => !(f in FULL_TIER_TESTS)),
          setupFiles,
        },
      },
    ],
  },
});
