import { relative } from "node:path";
import { beforeEach } from "vitest";
import { FULL_TIER_TESTS, TIER_VARIABLE } from "./tiers.js";

// Setup file of both projects (vitest.config.ts): of a file listed in FULL_TIER_TESTS, each tier
// skips the tests that belong to the other, so a run of both tiers runs every test once.
const tier = process.env[TIER_VARIABLE] === "unit" ? "unit" : "full";

beforeEach((ctx) => {
  const file = relative(process.cwd(), ctx.task.file.filepath).split("\\").join("/");
  const listed = FULL_TIER_TESTS[file];
  if (!listed) return;
  const names = [ctx.task.name];
  for (let suite = ctx.task.suite; suite; suite = suite.suite) names.push(suite.name);
  const full = names.some((name) => listed.includes(name));
  if (tier === "unit" && full) ctx.skip("runs in the full tier");
  if (tier === "full" && !full) ctx.skip("runs in the unit tier");
});
