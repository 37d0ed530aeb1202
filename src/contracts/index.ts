export type { CompareOp, Expr } from "./expression.js";
export { ExpressionError, expressionNames, parseExpression } from "./expression.js";
export type { Finding, Severity } from "./findings.js";
export { compareText, formatFinding, fromPointer, hasErrors, sortFindings, toPointer } from "./findings.js";
export type { FqnParts, Kind } from "./fqn.js";
export {
  API_VERSION,
  envelopeFqn,
  FQN_PATTERN,
  formatFqn,
  GRAPH_EDGE_PATTERN,
  KINDS,
  NAME_PATTERN,
  NUMBER_PREFIX_PATTERN,
  parseFqn,
} from "./fqn.js";
export type { LoadedContract, LoadOptions, LoadResult, ParseResult } from "./loader.js";
export {
  CONTRACT_SUFFIX,
  displayPath,
  findContractFiles,
  loadContractFile,
  loadContracts,
  MAX_ALIAS_COUNT,
  MAX_CONTRACT_BYTES,
  ParseCache,
  parseContractSource,
} from "./loader.js";
export type { Position } from "./locate.js";
export { locate } from "./locate.js";
export { pyRepr } from "./py-repr.js";
export { SCHEMA_DIR, SCHEMA_FILES, validateContractSchema } from "./schema.js";
export { SOFT_DELETE_MIXIN, STDLIB_MIXINS, SYSTEM_FIELDS } from "./stdlib.js";
