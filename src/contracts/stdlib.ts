import type { Field } from "./spec-types.generated.js";

/**
 * The standard mixins every domain can compose without declaring them (their field types are
 * Charter's choice). They are written as contract field definitions, so the compiler
 * treats them exactly like a user's Mixin contract.
 */
export const STDLIB_DOMAIN = "stdlib";

/** A field as a contract writes it, typed by the schema. */
export type FieldDefinition = Field;

export const STDLIB_MIXINS: Readonly<Record<string, Readonly<Record<string, FieldDefinition>>>> = {
  "mixin/stdlib/timestamped": {
    created_at: { type: "datetime", computed: "now", immutable: true, description: "When the record was created" },
    updated_at: { type: "datetime", computed: "now_on_update", description: "When the record last changed" },
  },
  "mixin/stdlib/identifiable": {
    id: { type: "uuid", computed: "uuid", immutable: true, description: "Primary key" },
    number: {
      type: "string",
      computed: "sequence({prefix}-{n:05})",
      immutable: true,
      description: "Sequential, human-readable number",
    },
  },
  "mixin/stdlib/auditable": {
    created_at: { type: "datetime", computed: "now", immutable: true, description: "When the record was created" },
    updated_at: { type: "datetime", computed: "now_on_update", description: "When the record last changed" },
    created_by: { type: "string", computed: "current_user", immutable: true, description: "Who created the record" },
    updated_by: { type: "string", computed: "current_user", description: "Who last changed the record" },
  },
  "mixin/stdlib/taggable": {
    tags: { type: "array", items_type: "string", default: [], description: "Free-form labels" },
  },
  "mixin/stdlib/commentable": {
    comments: { type: "array", items_type: "object", default: [], description: "Comments on the record" },
  },
  "mixin/stdlib/soft_deletable": {
    deleted_at: { type: "datetime", description: "When the record was deleted" },
    deleted_by: { type: "string", description: "Who deleted the record" },
    is_deleted: { type: "boolean", default: false, description: "Whether the record is deleted" },
  },
};

export const SOFT_DELETE_MIXIN = "mixin/stdlib/soft_deletable";

/** Fields every entity has whether or not a mixin declares them: the API needs them. */
export const SYSTEM_FIELDS: Readonly<Record<"id" | "created_at" | "updated_at", FieldDefinition>> = {
  id: { type: "uuid", computed: "uuid", immutable: true, description: "Primary key" },
  created_at: { type: "datetime", computed: "now", immutable: true, description: "When the record was created" },
  updated_at: { type: "datetime", computed: "now_on_update", description: "When the record last changed" },
};
