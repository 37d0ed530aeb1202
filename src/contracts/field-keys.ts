/**
 * The whitelists of the contract language (docs/contracts.md, "Entity"): the only keys a
 * field may carry and the only `constraints` keys. The Healer's LLM proposer and the importers'
 * enrichment strip anything else a model returns before validating.
 */
export const FIELD_PROPERTIES = [
  "type",
  "description",
  "required",
  "immutable",
  "default",
  "format",
  "enum",
  "items_type",
  "computed",
  "constraints",
  "references",
] as const;

/** The `constraints` keys: `min`, `max`, `maxLength`, `minLength`, `pattern` only. */
export const CONSTRAINT_KEYS = ["min", "max", "maxLength", "minLength", "pattern"] as const;
