export type { FixSummary, HealerOptions, RunSummary } from "./core.js";
export { Healer } from "./healer.js";
export { BUDGET_NOTE } from "./process.js";
