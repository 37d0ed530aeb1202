export type { FixSummary, HealerOptions, RunSummary } from "./core.js";
export { BUDGET_NOTE } from "./process.js";
export { Healer } from "./review.js";
