/**
 * The shapes the generated per-entity modules describe their fields and workflows with. The
 * generic components (table, form, detail, kanban) read these, so the generated code stays data.
 */
import type { FieldType } from "./field-types";

export type { FieldType, FieldWidget } from "./field-types";

export type EnumValue = string | number | boolean;

export interface FieldSpec {
  name: string;
  label: string;
  type: FieldType;
  required: boolean;
  /** Allowed values: the field renders as a select and its cells as badges. */
  enumValues?: readonly EnumValue[];
  /** Key of the field's reference source: the field is a picker of those records. */
  reference?: string;
  itemsType?: FieldType;
  /** The contract's default, pre-filled on the create form. */
  defaultValue?: unknown;
  description?: string;
}

/**
 * An entity's field specs, keyed by field name. A generic over the keys rather than
 * `satisfies Record<string, FieldSpec>`: a field may be named like a member of Object.prototype
 * (`constructor`), which a string index type would type as that member.
 */
export function fieldSpecs<const K extends string>(specs: { readonly [P in K]: FieldSpec }): { readonly [P in K]: FieldSpec } {
  return specs;
}

/** `map[key]` only when the map has the key itself: field and state names may be `constructor`. */
export function own<T>(map: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** A record as the API returns it; every entity has a string id. */
export interface ApiRecord {
  id: string;
}

/** Reads a field of any record by name (the generic views know fields only by name). */
export function readField(record: ApiRecord, name: string): unknown {
  return own(record as unknown as Record<string, unknown>, name);
}

export interface StateSpec {
  name: string;
  label: string;
  category: string;
  terminal: boolean;
}

export interface WorkflowSpec {
  initial: string;
  states: readonly StateSpec[];
  /** Source state -> allowed targets. */
  transitions: Readonly<Record<string, readonly string[]>>;
  /** Per-subtype transitions that replace the base ones for the listed source states. */
  typeOverride: {
    field: string;
    overrides: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  } | null;
}

/** The states a record may move to next: the same rule the backend enforces (guards aside). */
export function allowedTargets(workflow: WorkflowSpec, record: ApiRecord): readonly string[] {
  const state = stateOf(workflow, record);
  if (workflow.states.find((s) => s.name === state)?.terminal) return [];
  const override = workflow.typeOverride;
  if (override) {
    const subtype = readField(record, override.field);
    if (subtype !== null && subtype !== undefined) {
      const byState = own(override.overrides, String(subtype));
      const replaced = byState ? own(byState, state) : undefined;
      if (replaced) return replaced;
    }
  }
  return own(workflow.transitions, state) ?? [];
}

/** The record's workflow state; a record without one is in the initial state. */
export function stateOf(workflow: WorkflowSpec, record: ApiRecord): string {
  const state = readField(record, "state");
  return typeof state === "string" ? state : workflow.initial;
}

/** A validation rule of a create or update endpoint: the fields it reads and what to tell the user. */
export interface RuleSpec {
  fields: readonly string[];
  message: string;
}

/** A record with only the fields `names` (and its id): what an island needs, not the whole record. */
export function pick<T extends ApiRecord>(record: T, names: readonly string[]): T {
  const out: Record<string, unknown> = { id: record.id };
  for (const n of names) if (n in record) out[n] = readField(record, n);
  return out as unknown as T;
}
