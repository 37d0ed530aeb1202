/**
 * One row per contract field type: everything a generator or check needs to know about a type that
 * is not about one field. `FIELD_TYPES` is a `Record<FieldType, FieldTypeRow>`, so adding a type to
 * `FieldType` fails the type check until its row is written; the switches over `FieldType` in the
 * generators (value conversions that are code, not data) are exhaustive for the same reason.
 * It lives in the compiler because the compiler's own checks read it and generators depend on the
 * compiler, never the other way round. docs/architecture.md, "Adding a field type", walks through it.
 */

import type { Field } from "../contracts/spec-types.generated.js";

/** The contract schema's own list (a field's `type` enum), so the schema and this table cannot drift. */
export type FieldType = Field["type"];

/** PostgreSQL column types a field can have. */
export type SqlType = "UUID" | "TEXT" | "BIGINT" | "DOUBLE PRECISION" | "BOOLEAN" | "DATE" | "TIMESTAMPTZ" | "JSONB" | "INTERVAL";

/**
 * A Python type: a builtin's name, or `module:Name` imported where it is used. `app.fieldtypes`
 * holds the generated app's checking types (app/fieldtypes.py).
 */
export type PyType = string;

/** The Python type of a field in a request body (strict), a query string (parsed text) and a response. */
export interface PyTypes {
  body: PyType;
  query: PyType;
  response: PyType;
}

/**
 * How a form edits a value of the type: the element, and for `input` its HTML type, and an
 * optional pattern and placeholder the browser shows and checks before the API does.
 */
export interface FormWidget {
  element: "input" | "textarea" | "checkbox";
  inputType: "text" | "number" | "email" | "date" | "datetime-local";
  pattern?: string;
  placeholder?: string;
}

export interface FieldTypeRow {
  /** Column type; `sqlType` in the postgres generator, and migrations' widenings read it. */
  sql: SqlType;
  /** Python types of the FastAPI models; `json` for arrays and objects, whose types depend on their items. */
  python: PyTypes | "json";
  /** TypeScript type of the value as the API's JSON carries it. */
  ts: "string" | "number" | "boolean" | "unknown[]" | "Record<string, unknown>";
  /**
   * Which constraints apply: `text` (minLength, maxLength, pattern), `number` (min, max) or none.
   * Arrays take minLength and maxLength as item counts (checked in fields.ts).
   */
  constraints: "text" | "number" | "none";
  /** An `enum` is allowed, and list endpoints filter and sort on the field (equality, order). */
  scalar: boolean;
  /** List endpoints take `<field>_from` and `<field>_to` bounds on it. */
  ranged: boolean;
  /** `q=` searches fields of this type. */
  searchable: boolean;
  /** Whether a YAML value (a default, an enum value) can stand for the type. */
  fits: (v: unknown) => boolean;
  /**
   * The `i`th valid value generated tests send (array items are numbered; values differ by `i`).
   * Text and numbers are also shaped by a field's constraints, in src/generators/tests/solve.ts.
   */
  sample: (i: number) => unknown;
  widget: FormWidget;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** The shape the generated API's e-mail check needs at the least: one @, something on each side. */
const EMAIL = /^[^@\s]+@[^@\s]+$/;
const DATETIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?$/;
/**
 * ISO 8601 durations as pydantic reads them into a `timedelta`: days, hours, minutes and seconds
 * (`P3D`, `PT1H30M`, `P1DT12H`, `PT0.5S`), at least one part, a `T` before the time parts.
 * Years and months are left out: they have no fixed length, so neither a timedelta nor a
 * comparison could keep them.
 */
export const DURATION_PATTERN = "^-?P(?!$)(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+(\\.\\d+)?S)?)?$";
const DURATION = new RegExp(DURATION_PATTERN);

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

const text = (i: number): string => ["alpha", "beta"][i] ?? `item-${i}`;
const fieldtype = (name: string): PyType => `app.fieldtypes:${name}`;
const input = (inputType: FormWidget["inputType"], more: Omit<FormWidget, "element" | "inputType"> = {}): FormWidget => ({
  element: "input",
  inputType,
  ...more,
});
const stringRow = {
  sql: "TEXT",
  python: { body: fieldtype("Text"), query: fieldtype("Text"), response: "str" },
  ts: "string",
  constraints: "text",
  scalar: true,
  ranged: false,
  searchable: true,
  fits: (v: unknown) => typeof v === "string",
  sample: text,
} as const;

export const FIELD_TYPES: Readonly<Record<FieldType, FieldTypeRow>> = {
  string: { ...stringRow, widget: input("text") },
  integer: {
    sql: "BIGINT",
    python: { body: fieldtype("Int64"), query: fieldtype("QueryInt64"), response: "int" },
    ts: "number",
    constraints: "number",
    scalar: true,
    ranged: false,
    searchable: false,
    fits: (v) => typeof v === "number" && Number.isInteger(v),
    sample: (i) => i + 1,
    widget: input("number"),
  },
  number: {
    sql: "DOUBLE PRECISION",
    python: { body: fieldtype("Float64"), query: fieldtype("QueryFloat64"), response: "float" },
    ts: "number",
    constraints: "number",
    scalar: true,
    ranged: false,
    searchable: false,
    fits: (v) => typeof v === "number",
    sample: (i) => i + 1,
    widget: input("number"),
  },
  boolean: {
    sql: "BOOLEAN",
    python: { body: fieldtype("Bool"), query: "bool", response: "bool" },
    ts: "boolean",
    constraints: "none",
    scalar: true,
    ranged: false,
    searchable: false,
    fits: (v) => typeof v === "boolean",
    sample: (i) => i % 2 === 0,
    widget: { element: "checkbox", inputType: "text" },
  },
  text: { ...stringRow, widget: { element: "textarea", inputType: "text" } },
  array: {
    sql: "JSONB",
    python: "json",
    ts: "unknown[]",
    constraints: "none",
    scalar: false,
    ranged: false,
    searchable: false,
    fits: (v) => Array.isArray(v),
    sample: (i) => [`item-${i}`],
    widget: input("text", { placeholder: "Comma-separated values" }),
  },
  object: {
    sql: "JSONB",
    python: "json",
    ts: "Record<string, unknown>",
    constraints: "none",
    scalar: false,
    ranged: false,
    searchable: false,
    fits: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
    sample: (i) => ({ key: `value-${i}` }),
    widget: { element: "textarea", inputType: "text", placeholder: "{ }" },
  },
  datetime: {
    sql: "TIMESTAMPTZ",
    python: { body: fieldtype("UtcDatetime"), query: fieldtype("UtcDatetime"), response: "datetime:datetime" },
    ts: "string",
    constraints: "text",
    scalar: true,
    ranged: true,
    searchable: false,
    fits: (v) => typeof v === "string" && isIsoDateTime(v),
    sample: (i) => `2030-01-${String(15 + (i % 10)).padStart(2, "0")}T10:00:00Z`,
    widget: input("datetime-local"),
  },
  date: {
    sql: "DATE",
    python: { body: fieldtype("IsoDate"), query: fieldtype("IsoDate"), response: "datetime:date" },
    ts: "string",
    constraints: "text",
    scalar: true,
    ranged: true,
    searchable: false,
    fits: (v) => typeof v === "string" && isIsoDate(v),
    sample: (i) => `2030-01-${String(15 + (i % 10)).padStart(2, "0")}`,
    widget: input("date"),
  },
  uuid: {
    sql: "UUID",
    python: { body: "uuid:UUID", query: "uuid:UUID", response: "uuid:UUID" },
    ts: "string",
    constraints: "text",
    scalar: true,
    ranged: false,
    searchable: false,
    fits: (v) => typeof v === "string" && UUID.test(v),
    sample: (i) => `6f1c2b8e-3d4a-4c5b-9e7f-${String(i).padStart(12, "0")}`,
    widget: input("text"),
  },
  email: {
    ...stringRow,
    python: { body: fieldtype("Email"), query: fieldtype("Text"), response: "str" },
    fits: (v) => typeof v === "string" && EMAIL.test(v),
    sample: (i) => `item-${i}@example.com`,
    widget: input("email"),
  },
  // Not scalar: list cursors and query strings carry no interval yet, so no filter, sort or enum.
  duration: {
    sql: "INTERVAL",
    python: { body: fieldtype("IsoDuration"), query: fieldtype("IsoDuration"), response: "datetime:timedelta" },
    ts: "string",
    constraints: "none",
    scalar: false,
    ranged: false,
    searchable: false,
    fits: (v) => typeof v === "string" && DURATION.test(v),
    sample: (i) => `PT${i + 1}H30M`,
    widget: input("text", { pattern: DURATION_PATTERN.slice(1, -1), placeholder: "PT1H30M" }),
  },
};

/** The field types in the order the contract schema lists them. */
export const FIELD_TYPE_NAMES = Object.keys(FIELD_TYPES) as FieldType[];
