import type { FieldIR, ValidationRuleIR } from "../../compiler/ir.js";
import type { Expr } from "../../contracts/expression.js";

/** JSON Schema keywords added to one field's schema in a request model. */
export type SchemaKeywords = Record<string, unknown>;

/** A rule as the OpenAPI document tells it (`x-validation-rules` of its operation). */
export interface DocumentedRule {
  rule: ValidationRuleIR;
  /** Whether the request schema expresses the rule exactly, so a schema-valid body passes it. */
  inSchema: boolean;
}

export interface CompiledRules {
  /** Field name -> keywords of the rules the schema expresses exactly. */
  byField: Map<string, SchemaKeywords>;
  rules: DocumentedRule[];
}

/** What one rule says about one field; `nullAllowed` when the rule also passes on null (absent). */
interface FieldConstraint {
  field: string;
  keywords: SchemaKeywords;
  nullAllowed: boolean;
}

const NUMERIC = new Set(["integer", "number"]);
const TEXTUAL = new Set(["string", "text", "email"]);
const FLIP: Record<string, string> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==" };

function isNull(e: Expr): boolean {
  return e.type === "literal" && e.value === null;
}

/** `x == null` (or `null == x`): the name tested, else null. */
function nullTest(e: Expr): string | null {
  if (e.type !== "compare" || e.op !== "==") return null;
  if (e.left.type === "name" && isNull(e.right)) return e.left.name;
  if (e.right.type === "name" && isNull(e.left)) return e.right.name;
  return null;
}

function bound(field: FieldIR, op: string, n: number): SchemaKeywords | null {
  if (!NUMERIC.has(field.type)) return null;
  switch (op) {
    case "<=":
      return { maximum: n };
    case "<":
      return { exclusiveMaximum: n };
    case ">=":
      return { minimum: n };
    case ">":
      return { exclusiveMinimum: n };
    case "==":
      return { const: n };
    default:
      return null;
  }
}

/** The keywords a field's length bounds are written as: of its text, or of its items. */
function lengthKeywords(field: FieldIR): [string, string] | [] {
  return TEXTUAL.has(field.type) ? ["minLength", "maxLength"] : field.type === "array" ? ["minItems", "maxItems"] : [];
}

function lengthBound(field: FieldIR, op: string, n: number): SchemaKeywords | null {
  if (!Number.isInteger(n) || n < 0) return null;
  const [min, max] = lengthKeywords(field);
  if (!min || !max) return null;
  switch (op) {
    case "<=":
      return { [max]: n };
    case "<":
      return n > 0 ? { [max]: n - 1 } : null;
    case ">=":
      return { [min]: n };
    case ">":
      return { [min]: n + 1 };
    case "==":
      return { [min]: n, [max]: n };
    default:
      return null;
  }
}

/** The constraints of a rule on single fields, or null when the rule relates fields or is not expressible. */
function constraints(e: Expr, fields: ReadonlyMap<string, FieldIR>): FieldConstraint[] | null {
  if (e.type === "logical") {
    if (e.op === "and") {
      const left = constraints(e.left, fields);
      const right = constraints(e.right, fields);
      return left && right ? [...left, ...right] : null;
    }
    // `x == null or P(x)`: P holds whenever x is given.
    for (const [test, rest] of [
      [e.left, e.right],
      [e.right, e.left],
    ] as const) {
      const name = nullTest(test);
      if (name === null) continue;
      const inner = constraints(rest, fields);
      if (inner?.every((c) => c.field === name)) return inner.map((c) => ({ ...c, nullAllowed: true }));
    }
    return null;
  }
  if (e.type !== "compare") return null;
  let { left, right } = e;
  let op: string = e.op;
  if (op in FLIP && left.type === "literal") {
    [left, right] = [right, left];
    op = FLIP[op] as string;
  }
  if (op === "in" && left.type === "name" && right.type === "list") {
    const field = fields.get(left.name);
    const values = right.items.map((i) => (i.type === "literal" ? i.value : undefined));
    if (!field || values.some((v) => v === undefined || v === null)) return null;
    return [{ field: field.name, keywords: { enum: values }, nullAllowed: false }];
  }
  if (right.type !== "literal" || typeof right.value !== "number") {
    if (op === "==" && left.type === "name" && right.type === "literal" && typeof right.value === "string") {
      const field = fields.get(left.name);
      return field && TEXTUAL.has(field.type) ? [{ field: field.name, keywords: { const: right.value }, nullAllowed: false }] : null;
    }
    return null;
  }
  const n = right.value;
  if (left.type === "name") {
    const field = fields.get(left.name);
    const keywords = field ? bound(field, op, n) : null;
    return field && keywords ? [{ field: field.name, keywords, nullAllowed: false }] : null;
  }
  if (left.type === "call" && left.fn === "len" && left.args.length === 1 && left.args[0]?.type === "name") {
    const field = fields.get(left.args[0].name);
    const keywords = field ? lengthBound(field, op, n) : null;
    return field && keywords ? [{ field: field.name, keywords, nullAllowed: false }] : null;
  }
  return null;
}

const LOWER = new Set(["minimum", "minLength", "minItems"]);
const UPPER = new Set(["maximum", "maxLength", "maxItems"]);

/** The keywords the field's own type already writes (its constraints and enum), by keyword. */
function ownKeywords(field: FieldIR): SchemaKeywords {
  const c = field.constraints;
  const out: SchemaKeywords = {};
  if (NUMERIC.has(field.type)) {
    if (c.min !== undefined) out.minimum = c.min;
    if (c.max !== undefined) out.maximum = c.max;
  }
  const [min, max] = lengthKeywords(field);
  if (min && c.minLength !== undefined) out[min] = c.minLength;
  if (max && c.maxLength !== undefined) out[max] = c.maxLength;
  if (field.enum) out.enum = field.enum;
  return out;
}

/**
 * A rule's keyword where the field's type writes the same one: the tighter of the two. The rule's
 * keyword replaces the type's in the schema, and a looser one would let through what the type
 * refuses (`len(tags) >= 0` on a field of at least 2 items).
 */
function tighter(key: string, rule: unknown, own: unknown): unknown {
  if (LOWER.has(key)) return Math.max(rule as number, own as number);
  if (UPPER.has(key)) return Math.min(rule as number, own as number);
  if (key === "enum") return (rule as unknown[]).filter((v) => v === null || (own as unknown[]).includes(v as never));
  return rule;
}

/** Whether constraints hold exactly as schema keywords (no absent-field case, no clash with another rule's). */
function isExact(found: readonly FieldConstraint[], required: ReadonlySet<string>, byField: ReadonlyMap<string, SchemaKeywords>): boolean {
  return found.every(
    (c) => (c.nullAllowed || required.has(c.field)) && Object.keys(c.keywords).every((k) => !(k in (byField.get(c.field) ?? {}))),
  );
}

/**
 * The validation rules of one write operation, compiled into JSON Schema where that is exact: a
 * rule on one field (bounds, lengths, enums, `x == null or x <= N`) becomes keywords of that field's
 * schema, so a client and a fuzzer see it in the document. A rule that is not null-tolerant is exact
 * only for a field the request must carry (`required`). Everything else (a rule relating fields) is
 * left to the server and documented on the operation. The server still enforces every rule, so
 * its `on_fail` status and error name stay what the contract says.
 */
export function compileRules(
  rules: readonly ValidationRuleIR[],
  fields: readonly FieldIR[],
  required: ReadonlySet<string>,
  /** Rules also checked against stored values: their keywords go in, but never as exact. */
  stateful: ReadonlySet<ValidationRuleIR> = new Set(),
): CompiledRules {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const byField = new Map<string, SchemaKeywords>();
  const out: DocumentedRule[] = [];
  for (const rule of rules) {
    const found = constraints(rule.expr, byName);
    const exact = found !== null && isExact(found, required, byField);
    if (found && exact) {
      for (const c of found) {
        const keywords = { ...c.keywords };
        // An enum also lists null when null passes and the field can be null.
        if (c.nullAllowed && "const" in keywords) {
          keywords.enum = [keywords.const, null];
          delete keywords.const;
        }
        if (c.nullAllowed && Array.isArray(keywords.enum) && !keywords.enum.includes(null)) keywords.enum = [...keywords.enum, null];
        const own = ownKeywords(byName.get(c.field) as FieldIR);
        for (const [key, value] of Object.entries(keywords)) if (key in own) keywords[key] = tighter(key, value, own[key]);
        byField.set(c.field, { ...(byField.get(c.field) ?? {}), ...keywords });
      }
    }
    out.push({ rule, inSchema: exact && !stateful.has(rule) });
  }
  return { byField, rules: out };
}
