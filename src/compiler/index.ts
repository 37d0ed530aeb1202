export type { CompileResult } from "./compile.js";
export { compileDomain, referencesOf } from "./compile.js";
export type { CheckResult, ContractReport } from "./compile-path.js";
export { checkDomain } from "./compile-path.js";
export { findCycles, topologicalOrder } from "./graph.js";
export type * from "./ir.js";
export { IR_VERSION } from "./ir.js";
export { camelCase, humanize, kebabCase, pascalCase, pluralize, SYSTEM_TABLES } from "./naming.js";
