import { valueFitsType } from "../../compiler/fields.js";
import type { FieldIR, FieldType } from "../../compiler/index.js";
import { FIELD_TYPES } from "../../compiler/index.js";
import type { CompareOp, Expr } from "../../contracts/expression.js";

/** A record as the generated app sees it when it evaluates a rule: field name -> JSON value. */
export type Values = Record<string, unknown>;

/**
 * Evaluates a rule or guard condition the way the generated app does (app/expr.py): a missing value
 * never raises, an ordering comparison with a missing side is false, `len` of a missing value is 0.
 */
export function evaluate(e: Expr, v: Values): unknown {
  switch (e.type) {
    case "literal":
      return e.value;
    case "list":
      return e.items.map((x) => evaluate(x, v));
    case "name":
      return v[e.name] ?? null;
    case "call": {
      const arg = e.args[0] ? evaluate(e.args[0], v) : null;
      if (e.fn === "len") return arg === null ? 0 : Array.isArray(arg) || typeof arg === "string" ? arg.length : 0;
      return isSet(arg);
    }
    case "not":
      return !truthy(evaluate(e.operand, v));
    case "neg": {
      const x = evaluate(e.operand, v);
      return typeof x === "number" ? -x : null;
    }
    case "logical": {
      const left = truthy(evaluate(e.left, v));
      if (e.op === "and") return left && truthy(evaluate(e.right, v));
      return left || truthy(evaluate(e.right, v));
    }
    case "compare":
      return compare(e.op, evaluate(e.left, v), evaluate(e.right, v));
  }
}

export function holds(e: Expr, v: Values): boolean {
  return truthy(evaluate(e, v));
}

function isSet(x: unknown): boolean {
  if (x === null || x === undefined || x === "") return false;
  if (Array.isArray(x)) return x.length > 0;
  if (typeof x === "object") return Object.keys(x).length > 0;
  return true;
}

function truthy(x: unknown): boolean {
  if (x === null || x === undefined || x === false || x === 0 || x === "") return false;
  if (Array.isArray(x)) return x.length > 0;
  return true;
}

function compare(op: CompareOp, a: unknown, b: unknown): boolean {
  switch (op) {
    case "==":
      return a === b;
    case "!=":
      return a !== b;
    case "in":
      return Array.isArray(b) ? b.includes(a) : typeof b === "string" && typeof a === "string" && b.includes(a);
    case "not in":
      return !compare("in", a, b);
    default: {
      if (a === null || b === null || typeof a !== typeof b) return false;
      const x = a as number | string;
      const y = b as number | string;
      return op === "<" ? x < y : op === "<=" ? x <= y : op === ">" ? x > y : x >= y;
    }
  }
}

const MIRROR: Record<CompareOp, CompareOp> = {
  "==": "==",
  "!=": "!=",
  "<": ">",
  "<=": ">=",
  ">": "<",
  ">=": "<=",
  in: "in",
  "not in": "not in",
};
const NEGATE: Record<CompareOp, CompareOp> = {
  "==": "!=",
  "!=": "==",
  "<": ">=",
  "<=": ">",
  ">": "<=",
  ">=": "<",
  in: "not in",
  "not in": "in",
};

/**
 * Field values that make `e` evaluate to `want` on top of `base`, or null when this simple search
 * finds none. Every answer is checked by evaluating the expression again, so a wrong guess can
 * only lose a test case, never produce a wrong one. `fields` gives types, enums and constraints,
 * so the chosen values also pass the request model's own validation.
 */
export function force(e: Expr, want: boolean, base: Values, fields: ReadonlyMap<string, FieldIR>): Values | null {
  const found = search(e, want, base, fields);
  if (found === null) return null;
  const merged = { ...base, ...found };
  if (holds(e, merged) !== want) return null;
  for (const [name, value] of Object.entries(found)) {
    const f = fields.get(name);
    if (!f || !fieldAccepts(f, value)) return null;
  }
  return found;
}

function search(e: Expr, want: boolean, base: Values, fields: ReadonlyMap<string, FieldIR>): Values | null {
  if (holds(e, base) === want) return {};
  switch (e.type) {
    case "not":
      return search(e.operand, !want, base, fields);
    case "logical": {
      // A conjunction made true, or a disjunction made false, needs both sides; otherwise one will do.
      const both = (e.op === "and") === want;
      if (both) {
        const left = search(e.left, want, base, fields);
        if (left === null) return null;
        const right = search(e.right, want, { ...base, ...left }, fields);
        return right === null ? null : { ...left, ...right };
      }
      for (const side of [e.left, e.right]) {
        const r = search(side, want, base, fields);
        if (r !== null && holds(e, { ...base, ...r }) === want) return r;
      }
      return null;
    }
    case "call": {
      const arg = e.args[0];
      if (e.fn !== "is_set" || arg?.type !== "name") return null;
      const f = fields.get(arg.name);
      if (!f) return null;
      return { [arg.name]: want ? sampleValue(f) : null };
    }
    case "name": {
      const f = fields.get(e.name);
      return f?.type === "boolean" ? { [e.name]: want } : null;
    }
    case "compare":
      return solveCompare(e.op, e.left, e.right, want, fields);
    default:
      return null;
  }
}

function solveCompare(op: CompareOp, left: Expr, right: Expr, want: boolean, fields: ReadonlyMap<string, FieldIR>): Values | null {
  // Put the field (or len(field)) on the left and the constant on the right.
  if (left.type === "literal" || left.type === "list") return solveCompare(MIRROR[op], right, left, want, fields);
  const target = want ? op : NEGATE[op];
  const constant =
    right.type === "literal"
      ? right.value
      : right.type === "list"
        ? right.items.map((i) => (i.type === "literal" ? i.value : null))
        : undefined;
  if (constant === undefined) return null;
  if (left.type === "name") {
    const f = fields.get(left.name);
    if (!f) return null;
    const value = valueFor(f, target, constant);
    return value === undefined ? null : { [left.name]: value };
  }
  if (left.type === "call" && left.fn === "len" && left.args[0]?.type === "name" && typeof constant === "number") {
    const f = fields.get(left.args[0].name);
    if (!f) return null;
    const n = Math.max(0, numberFor(target, constant, 1));
    if (f.type === "array") return { [f.name]: Array.from({ length: n }, (_, i) => sampleItem(f.itemsType, i)) };
    return { [f.name]: "x".repeat(n) };
  }
  return null;
}

/** A value of field `f` that makes `f <op> constant` true; undefined when none is found. */
function valueFor(f: FieldIR, op: CompareOp, constant: unknown): unknown {
  const choices = f.enum ?? null;
  switch (op) {
    case "==":
      return constant;
    case "!=":
      if (choices) return choices.find((c) => c !== constant);
      if (constant === null) return sampleValue(f);
      return f.type === "boolean" ? !constant : sampleValue(f) !== constant ? sampleValue(f) : null;
    case "in":
      return Array.isArray(constant) ? constant[0] : undefined;
    case "not in":
      if (!Array.isArray(constant)) return undefined;
      if (choices) return choices.find((c) => !constant.includes(c));
      return constant.includes(sampleValue(f)) ? null : sampleValue(f);
    default: {
      if (typeof constant !== "number") return undefined;
      const step = f.type === "integer" ? 1 : 0.5;
      return numberFor(op, constant, step);
    }
  }
}

function numberFor(op: CompareOp, c: number, step: number): number {
  if (op === "<") return c - step;
  if (op === ">") return c + step;
  return c;
}

/** Whether the request model accepts `value` for `f` (type, enum and constraints). */
export function fieldAccepts(f: FieldIR, value: unknown): boolean {
  // The create model types a field with a default as its type (models.ts createField), not `| None`:
  // null is refused there even for an optional field, so no case may count on sending it.
  if (value === null) return !f.required && !(f.hasDefault && f.default !== null);
  if (f.enum && !f.enum.includes(value as string | number | boolean)) return false;
  if (!formatAccepts(f, value)) return false;
  const c = f.constraints;
  if (typeof value === "number") {
    if (f.type === "integer" && !Number.isInteger(value)) return false;
    if (c.min !== undefined && value < c.min) return false;
    if (c.max !== undefined && value > c.max) return false;
  }
  if (typeof value === "string") {
    if (c.minLength !== undefined && value.length < c.minLength) return false;
    if (c.maxLength !== undefined && value.length > c.maxLength) return false;
    if (c.pattern !== undefined && !new RegExp(c.pattern).test(value)) return false;
  }
  return true;
}

/**
 * Plain addresses only (`name.part+tag@host.example`): a subset of what the API's e-mail check
 * takes, so a value judged valid here is valid there. Anything else (the empty text a broken
 * `len(x) >= 1` asks for) is judged invalid, and the case that needed it is left uncovered. The
 * compiler's own check of e-mail defaults is looser on purpose: it only refuses what no API takes.
 */
const PLAIN_EMAIL =
  /^[A-Za-z0-9+_-]+(\.[A-Za-z0-9+_-]+)*@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** Whether a value has the form the field's type asks of it, where that is more than a JSON type. */
function formatAccepts(f: FieldIR, value: unknown): boolean {
  if (f.type === "email" || f.format === "email") return typeof value === "string" && PLAIN_EMAIL.test(value);
  // The compiler's check of YAML values (calendar dates, ISO date-times, uuids) is the one to match.
  if ((f.type === "uuid" && !f.references) || f.type === "date" || f.type === "datetime" || f.type === "duration") {
    return valueFitsType(value, f.type);
  }
  return true;
}

/** A valid sample value of a field (references are filled in by the suite at run time). */
export function sampleValue(f: FieldIR, seed = f.name): unknown {
  if (f.enum && f.enum.length > 0) return f.enum[0];
  const c = f.constraints;
  switch (f.type) {
    case "integer":
    case "number": {
      const base = f.type === "integer" ? 5 : 2.5;
      const lo = c.min ?? Number.NEGATIVE_INFINITY;
      const hi = c.max ?? Number.POSITIVE_INFINITY;
      return Math.min(Math.max(base, lo), hi);
    }
    case "email":
      return `${seed.replace(/_/g, "-")}@example.com`;
    case "uuid":
      return "6f1c2b8e-3d4a-4c5b-9e7f-0a1b2c3d4e5f";
    case "array":
      return [sampleItem(f.itemsType, 0), sampleItem(f.itemsType, 1)];
    case "object":
      return { key: "value" };
    case "string":
    case "text":
      return sampleText(f, seed);
    default:
      return FIELD_TYPES[f.type].sample(0);
  }
}

/**
 * The `i`th item of a sample array: a value of the declared item type, as the request model checks
 * each item (a date array refuses text, an object array refuses strings). Items differ by `i`.
 */
function sampleItem(itemsType: FieldType | null, i: number): unknown {
  return itemsType === null || itemsType === "array" ? (["alpha", "beta"][i] ?? `item-${i}`) : FIELD_TYPES[itemsType].sample(i);
}

function sampleText(f: FieldIR, seed: string): string | null {
  const c = f.constraints;
  const candidates = [
    f.format === "uri" ? "https://example.com/charter" : `Sample ${seed.replace(/_/g, " ")}`,
    "https://example.com/charter",
    "sample",
    "SAMPLE",
    "12345",
  ];
  for (let text of candidates) {
    if (c.minLength !== undefined && text.length < c.minLength) text = text.padEnd(c.minLength, "x");
    if (c.maxLength !== undefined && text.length > c.maxLength) text = text.slice(0, c.maxLength);
    if (fieldAccepts(f, text)) return text;
  }
  return null;
}
