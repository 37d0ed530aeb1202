export type {
  AgentContract,
  ContractDocument,
  EntityContract,
  InfraContract,
  MixinContract,
  PageContract,
  RouteContract,
  WorkflowContract,
} from "./contract-types.js";
export type { CompareOp, Expr } from "./expression.js";
export { ExpressionError, expressionNames, parseExpression } from "./expression.js";
export type { Finding, Severity } from "./findings.js";
export { formatFinding, fromPointer, hasErrors, sortFindings, toPointer } from "./findings.js";
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
export type { ValidatedContract } from "./schema.js";
export { SCHEMA_DIR, SCHEMA_FILES, validateContractSchema, validatedContract } from "./schema.js";
export type {
  AgentSpec,
  ContractMetadata,
  Endpoint,
  EntitySpec,
  Field,
  InfraSpec,
  MixinSpec,
  PageSpec,
  RouteSpec,
  SpecOfKind,
  WorkflowSpec,
} from "./spec-types.generated.js";
export { SOFT_DELETE_MIXIN, STDLIB_MIXINS, SYSTEM_FIELDS } from "./stdlib.js";
