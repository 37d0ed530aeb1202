import { pyRepr } from "../contracts/py-repr.js";
import type { FieldDefinition } from "../contracts/stdlib.js";
import type { ContractEnvelope, PathSegments, Reporter } from "./context.js";
import { FIELD_TYPES } from "./field-types.js";
import type { ComputedIR, ConstraintsIR, FieldIR, FieldType } from "./ir.js";
import { limitIdentifier } from "./naming.js";

/**
 * Never null in a record: required fields, the primary key and the timestamps the server sets on
 * every write (the workflow state is added by buildEntity, never null either). The postgres
 * target's NOT NULL, the FastAPI record models and the frontend's types all read this.
 */
export function presence(f: Pick<FieldIR, "required" | "primaryKey" | "computed">): Pick<FieldIR, "nullable" | "alwaysPresent"> {
  const always = f.required || f.primaryKey || f.computed?.kind === "now" || f.computed?.kind === "now_on_update";
  return { nullable: !always, alwaysPresent: always };
}

/** Parses a `computed` value; `sequence(FMT)` resolves against the entity's prefix and name. */
export function parseComputed(value: string, entityName: string, prefix: string | null): ComputedIR {
  const seq = /^sequence\((.*)\)$/.exec(value);
  if (seq) {
    const raw = seq[1] ?? "";
    // Without a prefix the `{prefix}` placeholder and the separator after it drop out: `{n:05}`.
    const format = prefix ? raw : raw.replace(/\{prefix\}[-_./ ]?/g, "");
    return { kind: "sequence", format: format || "{n}", prefix, sequenceName: limitIdentifier(`${entityName}_number_seq`) };
  }
  return { kind: value as "now" | "now_on_update" | "current_user" | "uuid" };
}

/**
 * Builds one field of the IR from its (schema-valid) definition and checks what a schema cannot:
 * a default of the right type and inside the enum, options that fit the type, a usable pattern.
 */
export function buildField(
  reporter: Reporter,
  contract: ContractEnvelope | null,
  path: PathSegments,
  name: string,
  def: FieldDefinition,
  origin: string,
  entityName: string,
  prefix: string | null,
): FieldIR {
  const type = def.type;
  const computed = def.computed ? parseComputed(def.computed, entityName, prefix) : null;
  const refs = def.references;
  const primaryKey = name === "id";
  // Read out rather than spread in: a spread into the literal builds every field record the slow
  // way (see the note at the end of context.ts).
  const { nullable, alwaysPresent } = presence({ required: def.required === true, primaryKey, computed });
  const field: FieldIR = {
    name,
    type,
    description: def.description ?? "",
    required: def.required === true,
    immutable: def.immutable === true || primaryKey,
    hasDefault: "default" in def,
    // A default is any JSON value: the checks below compare it with the field's type and enum.
    default: "default" in def ? def.default : null,
    format: def.format ?? null,
    enum: def.enum ?? null,
    itemsType: def.items_type ?? null,
    computed,
    constraints: pick(def.constraints ?? {}),
    references: refs
      ? {
          entity: refs.entity,
          entityName: refs.entity.split("/")[2] ?? "",
          display: refs.display ?? null,
          graphEdge: refs.graph_edge ?? null,
          graphDirection: refs.graph_direction ?? "forward",
          onDelete: refs.on_delete ?? (def.required === true ? "restrict" : "set_null"),
        }
      : null,
    renamedFrom: def.renamed_from ?? null,
    origin,
    primaryKey,
    writable: computed === null && !primaryKey,
    updatable: computed === null && !primaryKey && def.immutable !== true,
    nullable,
    alwaysPresent,
  };
  if (contract) checkField(reporter, contract, path, field);
  return field;
}

function pick(c: ConstraintsIR): ConstraintsIR {
  const out: ConstraintsIR = {};
  if (typeof c.min === "number") out.min = c.min;
  if (typeof c.max === "number") out.max = c.max;
  if (typeof c.minLength === "number") out.minLength = c.minLength;
  if (typeof c.maxLength === "number") out.maxLength = c.maxLength;
  if (typeof c.pattern === "string") out.pattern = c.pattern;
  return out;
}

function checkField(reporter: Reporter, contract: ContractEnvelope, path: PathSegments, f: FieldIR): void {
  const at: FieldPlace = (...rest) => [...path, ...rest];
  const row = FIELD_TYPES[f.type];
  if (f.enum && !row.scalar) {
    reporter.report(contract, at("enum"), "field.enum_type", `enum is not allowed on a field of type ${pyRepr(f.type)}`);
  }
  if (f.enum) {
    f.enum.forEach((v, i) => {
      const broken = valueFitsType(v, f.type) ? constraintBroken(v, f) : null;
      if (!valueFitsType(v, f.type)) {
        reporter.report(contract, at("enum", i), "field.enum_value", `${pyRepr(v)} is not of type ${pyRepr(f.type)}`);
      } else if (broken) {
        // The API refuses a value outside the constraints: such an enum value could never be stored.
        reporter.report(contract, at("enum", i), "field.enum_constraint", `${pyRepr(v)} ${broken}`);
      }
    });
  }
  if (f.itemsType && f.type !== "array") {
    reporter.report(contract, at("items_type"), "field.items_type", `items_type is only allowed on a field of type 'array'`);
  }
  if (f.references && f.type !== "uuid") {
    reporter.report(contract, at("type"), "field.reference_type", `${pyRepr(f.type)} is not one of ['uuid']`);
  }
  if (f.references?.onDelete === "set_null" && f.required) {
    reporter.report(
      contract,
      at("references", "on_delete"),
      "field.on_delete_required",
      "on_delete 'set_null' needs an optional field (a required reference cannot be cleared); use 'restrict' or 'cascade', or drop required",
    );
  }
  if (f.computed) {
    const k = f.computed.kind;
    const expected: FieldType[] =
      k === "now" || k === "now_on_update" ? ["datetime", "date"] : k === "uuid" ? ["uuid", "string"] : ["string"];
    if (!expected.includes(f.type)) {
      reporter.report(contract, at("type"), "field.computed_type", `${pyRepr(f.type)} is not one of ${pyRepr(expected)}`);
    }
    if (f.computed.kind === "sequence" && !/\{n(:0?\d+)?\}/.test(f.computed.format)) {
      reporter.report(
        contract,
        at("computed"),
        "field.sequence_format",
        `sequence format ${pyRepr(f.computed.format)} has no {n} placeholder`,
      );
    }
  }
  checkFieldConstraints(reporter, contract, at, f);
  checkFieldDefault(reporter, contract, at, f);
}

/** A place inside the field being checked: `at("enum", 0)` is its first enum value. */
type FieldPlace = (...rest: (string | number)[]) => PathSegments;

/** Constraints must suit the field's type, form a non-empty range, and a pattern must compile. */
function checkFieldConstraints(reporter: Reporter, contract: ContractEnvelope, at: FieldPlace, f: FieldIR): void {
  const row = FIELD_TYPES[f.type];
  const c = f.constraints;
  if ((c.min !== undefined || c.max !== undefined) && row.constraints !== "number") {
    reporter.report(
      contract,
      at("constraints"),
      "field.constraint_type",
      `min and max apply to integer and number fields, not ${pyRepr(f.type)}`,
    );
  }
  if (c.pattern !== undefined && row.constraints !== "text") {
    reporter.report(contract, at("constraints"), "field.constraint_type", `pattern applies to text fields, not ${pyRepr(f.type)}`);
  } else if (
    (c.minLength !== undefined || c.maxLength !== undefined || c.pattern !== undefined) &&
    row.constraints !== "text" &&
    f.type !== "array"
  ) {
    reporter.report(
      contract,
      at("constraints"),
      "field.constraint_type",
      `minLength, maxLength and pattern apply to text fields, not ${pyRepr(f.type)}`,
    );
  }
  if (c.min !== undefined && c.max !== undefined && c.min > c.max) {
    reporter.report(
      contract,
      at("constraints", "min"),
      "field.constraint_range",
      `${pyRepr(c.min)} is greater than the maximum of ${pyRepr(c.max)}`,
    );
  }
  if (c.minLength !== undefined && c.maxLength !== undefined && c.minLength > c.maxLength) {
    reporter.report(
      contract,
      at("constraints", "minLength"),
      "field.constraint_range",
      `${pyRepr(c.minLength)} is greater than the maximum of ${pyRepr(c.maxLength)}`,
    );
  }
  if (c.pattern !== undefined) {
    try {
      new RegExp(c.pattern, "u");
    } catch {
      reporter.report(contract, at("constraints", "pattern"), "field.pattern", `${pyRepr(c.pattern)} is not a 'regex'`);
    }
  }
}

/** A default must fit the field's type, enum and constraints; a computed field takes none. */
function checkFieldDefault(reporter: Reporter, contract: ContractEnvelope, at: FieldPlace, f: FieldIR): void {
  if (f.hasDefault && f.computed) {
    reporter.report(
      contract,
      at("default"),
      "field.default_computed",
      `a computed field (${f.computed.kind}) takes no default: the server always sets it`,
    );
  } else if (f.hasDefault && f.default !== null) {
    const broken = constraintBroken(f.default, f);
    if (!valueFitsType(f.default, f.type, f.itemsType)) {
      const what = f.type === "array" && f.itemsType ? `an array of ${f.itemsType}` : `of type ${pyRepr(f.type)}`;
      reporter.report(contract, at("default"), "field.default_type", `${pyRepr(f.default)} is not ${what}`);
    } else if (f.enum && !f.enum.includes(f.default as string)) {
      reporter.report(contract, at("default"), "field.default_enum", `${pyRepr(f.default)} is not one of ${pyRepr(f.enum)}`);
    } else if (broken) {
      // Else every record created without the field would be refused, or stored against its own rules.
      reporter.report(contract, at("default"), "field.default_constraint", `the default ${pyRepr(f.default)} ${broken}`);
    }
  }
}

/** Whether a YAML value can stand for a field of `type` (dates and uuids are strings in YAML, in their format). */
export function valueFitsType(v: unknown, type: FieldType, itemsType: FieldType | null = null): boolean {
  if (type === "array") return Array.isArray(v) && (itemsType === null || v.every((item) => valueFitsType(item, itemsType)));
  return FIELD_TYPES[type].fits(v);
}

/** What a value breaks of the field's constraints, in words, or null when it keeps them all. */
function constraintBroken(v: unknown, f: FieldIR): string | null {
  const c = f.constraints;
  if (typeof v === "number") {
    // The app's integers are JSON's exact ones: a larger default would be refused when sent back.
    if (f.type === "integer" && !Number.isSafeInteger(v))
      return `is beyond the exact integers of JSON (-${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER})`;
    if (c.min !== undefined && v < c.min) return `is below the minimum of ${pyRepr(c.min)}`;
    if (c.max !== undefined && v > c.max) return `is above the maximum of ${pyRepr(c.max)}`;
  }
  const length = typeof v === "string" ? [...v].length : Array.isArray(v) ? v.length : null;
  if (length !== null) {
    if (c.minLength !== undefined && length < c.minLength) return `is shorter than the minLength of ${c.minLength}`;
    if (c.maxLength !== undefined && length > c.maxLength) return `is longer than the maxLength of ${c.maxLength}`;
  }
  if (typeof v === "string" && c.pattern !== undefined) {
    try {
      if (!new RegExp(c.pattern, "u").test(v)) return `does not match the pattern ${pyRepr(c.pattern)}`;
    } catch {
      // An invalid pattern is reported on its own.
    }
  }
  return null;
}
