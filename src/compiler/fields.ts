import { pyRepr } from "../contracts/py-repr.js";
import type { Contract, PathSegments, Reporter } from "./context.js";
import { asRecord } from "./context.js";
import type { ComputedIR, ConstraintsIR, FieldIR, FieldType } from "./ir.js";
import { limitIdentifier } from "./naming.js";

const SCALAR_TYPES = new Set<FieldType>(["string", "integer", "number", "boolean", "text", "datetime", "date", "uuid", "email"]);
const STRING_TYPES = new Set<FieldType>(["string", "text", "email", "uuid", "date", "datetime"]);
const NUMERIC_TYPES = new Set<FieldType>(["integer", "number"]);

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
  contract: Contract | null,
  path: PathSegments,
  name: string,
  def: Record<string, unknown>,
  origin: string,
  entityName: string,
  prefix: string | null,
): FieldIR {
  const type = def.type as FieldType;
  const computedRaw = typeof def.computed === "string" ? def.computed : null;
  const computed = computedRaw ? parseComputed(computedRaw, entityName, prefix) : null;
  const constraints = asRecord(def.constraints) as ConstraintsIR;
  const refs = asRecord(def.references);
  const hasRef = typeof refs.entity === "string";
  const primaryKey = name === "id";
  const field: FieldIR = {
    name,
    type,
    description: typeof def.description === "string" ? def.description : "",
    required: def.required === true,
    immutable: def.immutable === true || primaryKey,
    hasDefault: "default" in def,
    default: "default" in def ? def.default : null,
    format: typeof def.format === "string" ? def.format : null,
    enum: Array.isArray(def.enum) ? (def.enum as (string | number | boolean)[]) : null,
    itemsType: typeof def.items_type === "string" ? (def.items_type as FieldType) : null,
    computed,
    constraints: pick(constraints),
    references: hasRef
      ? {
          entity: refs.entity as string,
          entityName: String(refs.entity).split("/")[2] ?? "",
          display: typeof refs.display === "string" ? refs.display : null,
          graphEdge: typeof refs.graph_edge === "string" ? refs.graph_edge : null,
          graphDirection: refs.graph_direction === "reverse" ? "reverse" : "forward",
          onDelete:
            refs.on_delete === "restrict" || refs.on_delete === "cascade" || refs.on_delete === "set_null"
              ? refs.on_delete
              : def.required === true
                ? "restrict"
                : "set_null",
        }
      : null,
    renamedFrom: typeof def.renamed_from === "string" ? def.renamed_from : null,
    origin,
    primaryKey,
    writable: computed === null && !primaryKey,
    updatable: computed === null && !primaryKey && def.immutable !== true,
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

function checkField(reporter: Reporter, contract: Contract, path: PathSegments, f: FieldIR): void {
  const at = (...rest: (string | number)[]): PathSegments => [...path, ...rest];
  if (f.enum && !SCALAR_TYPES.has(f.type)) {
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
  const c = f.constraints;
  if ((c.min !== undefined || c.max !== undefined) && !NUMERIC_TYPES.has(f.type)) {
    reporter.report(
      contract,
      at("constraints"),
      "field.constraint_type",
      `min and max apply to integer and number fields, not ${pyRepr(f.type)}`,
    );
  }
  if (c.pattern !== undefined && !STRING_TYPES.has(f.type)) {
    reporter.report(contract, at("constraints"), "field.constraint_type", `pattern applies to text fields, not ${pyRepr(f.type)}`);
  } else if (
    (c.minLength !== undefined || c.maxLength !== undefined || c.pattern !== undefined) &&
    !STRING_TYPES.has(f.type) &&
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
  switch (type) {
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    case "array":
      return Array.isArray(v) && (itemsType === null || v.every((item) => valueFitsType(item, itemsType)));
    case "object":
      return v !== null && typeof v === "object" && !Array.isArray(v);
    case "date":
      return typeof v === "string" && isIsoDate(v);
    case "datetime":
      return typeof v === "string" && isIsoDateTime(v);
    case "uuid":
      return typeof v === "string" && UUID.test(v);
    case "email":
      return typeof v === "string" && EMAIL.test(v);
    default:
      return typeof v === "string";
  }
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** The shape the generated API's e-mail check needs at the least: one @, something on each side. */
const EMAIL = /^[^@\s]+@[^@\s]+$/;
const DATETIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?$/;

function isIsoDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

function isIsoDateTime(s: string): boolean {
  const m = DATETIME.exec(s);
  return m !== null && isIsoDate(m[1] as string) && Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4] ?? 0) < 60;
}

/** What a value breaks of the field's constraints, in words, or null when it keeps them all. */
function constraintBroken(v: unknown, f: FieldIR): string | null {
  const c = f.constraints;
  if (typeof v === "number") {
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
