/**
 * The two test tiers. The unit tier (`npm test`) runs what needs only Node: no PostgreSQL, no
 * Python, no Chromium, no servers of a generated app. The full tier (`npm run test:all`,
 * scripts/test.sh) runs everything else. `vitest run` without `--project` runs both, each test once.
 *
 * A test file lands in the full tier unless it is listed here, so a new end-to-end test cannot
 * slip into the unit tier; and one that is listed but reaches for PostgreSQL, Python or Chromium
 * fails there with "needs the full tier" (see `needsFullTier`).
 */

/** The test files of the unit tier (a file of FULL_TIER_TESTS by its own name, not through a folder pattern). */
export const UNIT_FILES = [
  "test/architecture/import-cycles.test.ts",
  "test/architecture/python-import-cycles.test.ts",
  "test/contracts/**/*.test.ts",
  "test/compiler/**/*.test.ts",
  "test/cli/**/*.test.ts",
  "test/generators/writer.test.ts",
  "test/generators/parallel.test.ts",
  "test/generators/no-figures-in-comments.test.ts",
  "test/generators/scenarios.test.ts",
  "test/generators/format.test.ts",
  "test/generators/rule-schema.test.ts",
  "test/llm/doctor.test.ts",
  "test/llm/json.test.ts",
  "test/llm/providers.test.ts",
  "test/dev/supervisor.test.ts",
  "test/frontend/nextjs-generator.test.ts",
  "test/generated-tests/solve.test.ts",
  "test/generated-tests/type-coherence.test.ts",
  "test/backend/fastapi-golden.test.ts",
  "test/docker/docker-target.test.ts",
  "test/healer/classify.test.ts",
  // test/healer/cli.test.ts is in the full tier: each case runs `charter healer` end to end,
  // regenerating the app, and the file alone took most of the unit tier's two minutes.
  "test/healer/crash.test.ts",
  "test/healer/llm-proposer.test.ts",
  "test/healer/normalise.test.ts",
  "test/healer/notify.test.ts",
  "test/healer/pipeline.test.ts",
  "test/healer/risk.test.ts",
  "test/healer/safety.test.ts",
  "test/healer/server.test.ts",
  "test/healer/ticket-table.test.ts",
  "test/importers/enrich.test.ts",
  "test/importers/openapi-classes.test.ts",
  "test/importers/shared.test.ts",
  "test/importers/prisma-fidelity.test.ts",
  "test/importers/code-judges.test.ts",
  "test/importers/fidelity.test.ts",
];

/**
 * Tests of unit-tier files that need the full tier, by file and the name of the test or of a
 * `describe` around it. Their file runs in
 * both tiers: these tests only in the full tier, every other test of the file only in the unit tier.
 */
export const FULL_TIER_TESTS: Record<string, readonly string[]> = {
  "test/generated-tests/type-coherence.test.ts": ["field types, computed kinds, defaults and constraints that validate"],
  "test/backend/fastapi-golden.test.ts": ["passes ruff check, ruff format --check and mypy, with and without auth"],
  "test/generators/scenarios.test.ts": ["passes ruff check and ruff format --check"],
  "test/docker/docker-target.test.ts": ["pass hadolint"],
  "test/importers/enrich.test.ts": ["LLM enrichment of charter extract (fake OpenAI-compatible server)"],
  "test/llm/doctor.test.ts": ["checks node, python and that PostgreSQL and the Healer are reachable"],
};

/** The variable the unit tier sets; the helpers of test/support refuse PostgreSQL, Python and Chromium under it. */
export const TIER_VARIABLE = "CHARTER_TEST_TIER";

/** Throws when a unit-tier test reaches for `what`; a no-op in the full tier. */
export function needsFullTier(what: string): void {
  if (process.env[TIER_VARIABLE] !== "unit") return;
  throw new Error(
    `this test needs the full tier (it uses ${what}): run it with \`npm run test:all\` or \`npx vitest run --project full\`, ` +
      "and leave its file out of UNIT_FILES in test/support/tiers.ts (or list the test in FULL_TIER_TESTS there)",
  );
}
