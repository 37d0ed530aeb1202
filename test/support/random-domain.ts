import fc from "fast-check";
import { pascalCase, pluralize } from "../../src/compiler/naming.js";
import { parseExpression } from "../../src/contracts/expression.js";

/**
 * Random valid domains (fast-check arbitraries) for the property test of generation
 * (test/generators/random-domains.test.ts) and its bench (bench/random-domains.mjs).
 *
 * Every domain drawn here must validate (a finding means the arbitrary or the compiler is wrong),
 * except those drawn with `tooLong`, which carry their expected refusal. Names come on purpose from
 * the places where generated code breaks: Object.prototype's own names, Python's key words and
 * builtins, PostgreSQL's reserved words, TypeScript's globals, the generated app's own module and
 * variable names, and long names up to PostgreSQL's 63 bytes (and past them, with `tooLong`).
 * Contracts are written as JSON (a YAML subset), so a name such as `on` or `null` stays a string.
 */

/**
 * Python's keywords and the builtins a generated module may shadow, Pydantic's model attributes, and
 * the generated backend's own names (app/main.py, app/domain.py...).
 */
const PYTHON_NAMES = [
  ...["and", "as", "assert", "async", "await", "break", "case", "class", "continue", "def", "del", "elif", "else", "except"],
  ...["finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "match", "nonlocal", "not", "or", "pass"],
  ...["raise", "return", "try", "type", "while", "with", "yield"],
  ...["list", "dict", "str", "int", "float", "bool", "bytes", "tuple", "len", "print", "range", "property", "super", "self"],
  ...["cls", "format", "filter", "min", "max", "sum", "open", "input", "hash", "iter", "next", "vars", "dir", "all", "any"],
  ...["copy", "json", "schema", "validate", "fields", "construct"],
  ...["domain", "health", "settings", "setting", "entity", "route_contract", "link", "app", "config", "deps", "model"],
  ...["session", "request", "response", "query", "event", "agent_run", "row_count"],
];

/** PostgreSQL's reserved key words (its documentation's appendix C), those a name may spell. */
const SQL_NAMES = [
  ...["all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both", "case", "cast", "check"],
  ...["collate", "column", "constraint", "create", "current_catalog", "current_date", "current_role", "current_time"],
  ...["current_timestamp", "current_user", "default", "deferrable", "desc", "distinct", "do", "else", "end", "except"],
  ...["false", "fetch", "for", "foreign", "from", "grant", "group", "having", "in", "initially", "intersect", "into"],
  ...["lateral", "leading", "limit", "localtime", "localtimestamp", "not", "null", "offset", "on", "only", "or", "order"],
  ...["placing", "primary", "references", "returning", "select", "session_user", "some", "symmetric", "system_user"],
  ...["table", "then", "to", "trailing", "true", "union", "unique", "user", "using", "variadic", "when", "where"],
  ...["window", "with"],
];

/**
 * The own names of `Object.prototype` (`constructor`, `__proto__`, `hasOwnProperty`, `toString`,
 * `valueOf`...) and of functions (`prototype`, `name`, `length`), spelt as contract names may spell
 * them: `constructor` as it is, the others in snake_case (`has_own_property`, `to_string`, `proto`),
 * which generated TypeScript may camelCase back to the very name. A name that cannot be spelt so
 * (`__proto__` as it is, `toString`) is refused by the name pattern: test/compiler/random-domains.test.ts.
 */
export const OBJECT_PROTOTYPE_NAMES = [
  ...new Set(
    [...Object.getOwnPropertyNames(Object.prototype), "prototype", "name", "length", "caller", "arguments", "apply", "bind", "call"].map(
      (n) =>
        n
          .replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
          .replace(/^_+|_+$/g, "")
          .replace(/__+/g, "_"),
    ),
  ),
].sort();

/** TypeScript/JavaScript keywords and globals, and names of the generated frontend. */
const TS_NAMES = [
  // Python builtins too, but their PascalCase (`Object`, `Set`) shadows a TypeScript global.
  "object",
  "set",
  "function",
  "interface",
  "delete",
  "new",
  "this",
  "var",
  "let",
  "const",
  "enum",
  "void",
  "number",
  "string",
  "boolean",
  "record",
  "promise",
  "date",
  "error",
  "map",
  "window",
  "document",
  "page",
  "layout",
  "api",
];

const PLAIN_NAMES = ["ticket", "customer", "invoice", "note", "project", "item", "category", "person", "status"];

/** Names a contract may not use for a field: the implicit columns, the workflow's, the mixins'. */
const RESERVED_FIELDS = new Set(["id", "created_at", "updated_at", "state", "number", "tags", "deleted_at", "deleted_by", "is_deleted"]);

/** PostgreSQL keeps 63 bytes of a name (test/compiler/name-limits.test.ts): the last one that must work. */
const MAX_NAME_BYTES = 63;

/**
 * A snake_case name of exactly `bytes` bytes (ASCII: the name pattern allows nothing else), made
 * of keywords so that it is also every other kind of awkward; never ending on `_`.
 */
function nameOfLength(bytes: fc.Arbitrary<number>): fc.Arbitrary<string> {
  const words = fc.array(fc.constantFrom("alpha", "beta", "gamma", "delta", "order", "class", "select", "import", "constructor"), {
    minLength: 20,
    maxLength: 20,
  });
  return fc.tuple(words, bytes).map(([parts, n]) => {
    const cut = parts.join("_").slice(0, n);
    return cut.endsWith("_") ? `${cut.slice(0, -1)}x` : cut;
  });
}

/** Long field names, up to the limit itself (63 bytes, drawn most). */
const longFieldName = nameOfLength(fc.oneof(fc.constant(MAX_NAME_BYTES), fc.integer({ min: 40, max: MAX_NAME_BYTES })));
/**
 * Long entity names: their table is their plural (up to 3 bytes more) and a reference to one is
 * `<name>_id`, so 56 bytes keep both within the limit.
 */
const longEntityName = nameOfLength(fc.integer({ min: 40, max: 56 }));
/** Past the limit: validation must refuse these (`name.too_long`), located. */
const tooLongName = nameOfLength(fc.integer({ min: MAX_NAME_BYTES + 1, max: 90 }));

function nameArbitrary(long: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const pool = fc.constantFrom(...PYTHON_NAMES, ...SQL_NAMES, ...OBJECT_PROTOTYPE_NAMES, ...TS_NAMES, ...PLAIN_NAMES);
  return fc.oneof({ weight: 8, arbitrary: pool }, { weight: 1, arbitrary: long });
}

const FIELD_TYPES = ["string", "integer", "number", "boolean", "text", "array", "object", "datetime", "date", "uuid", "email"] as const;
type FieldType = (typeof FIELD_TYPES)[number];

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
type FieldDef = { [k: string]: Json };

interface FieldPlan {
  name: string;
  def: FieldDef;
}

/**
 * What a guard or rule may say about a field, always satisfiable by some value of it; null when the
 * expression language cannot name the field (`and`, `in`, `null` are its own key words).
 */
function conditionFor(f: FieldPlan): string | null {
  const c = conditionText(f);
  if (c === null) return null;
  try {
    parseExpression(c);
    return c;
  } catch {
    return null;
  }
}

function conditionText(f: FieldPlan): string | null {
  const t = f.def.type as FieldType;
  const c = (f.def.constraints ?? {}) as { min?: number; max?: number };
  if (f.def.enum) return `${f.name} in [${(f.def.enum as Json[]).map(literal).join(", ")}]`;
  if (t === "string" || t === "text" || t === "email") return `len(${f.name}) >= 1`;
  if (t === "integer" || t === "number") return `${f.name} >= ${c.min ?? 0}`;
  if (t === "boolean") return `${f.name} == true`;
  if (t === "array") return `len(${f.name}) >= 0`;
  return null;
}

function literal(v: Json): string {
  return typeof v === "string" ? `'${v}'` : String(v);
}

const WORDS = ["alpha", "beta", "gamma", "none", "null", "true", "class", "select", "x y", "émile"];

/** `^…$` patterns with a value each matches, in the common subset of JavaScript and Python regexes. */
const PATTERNS: [string, string][] = [
  ["^[a-z]+$", "abc"],
  ["^[A-Z][a-z0-9 ]*$", "Abc 1"],
  ["^[0-9]{3}-[0-9]{4}$", "555-0100"],
];

function stringField(type: "string" | "text"): fc.Arbitrary<FieldDef> {
  return fc
    .oneof(
      // An enum (every value its own default candidate).
      fc
        .uniqueArray(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 })
        .chain((values) => fc.record({ enum: fc.constant(values as Json), default: fc.option(fc.constantFrom(...values)) })),
      // A pattern, with a default that matches it.
      fc
        .constantFrom(...PATTERNS)
        .chain(([pattern, sample]) => fc.record({ constraints: fc.constant({ pattern }), default: fc.option(fc.constant(sample)) })),
      // Length bounds, with a default inside them.
      fc.record({ minLength: fc.integer({ min: 0, max: 3 }), extra: fc.integer({ min: 3, max: 300 }) }).chain(({ minLength, extra }) =>
        fc.record({
          constraints: fc.constant({ minLength, maxLength: minLength + extra }),
          default: fc.option(fc.constant("d".repeat(Math.max(minLength, 1)))),
        }),
      ),
      fc.constant({}),
    )
    .map((d) => ({ type, ...dropNull(d) }));
}

function numberField(type: "integer" | "number"): fc.Arbitrary<FieldDef> {
  const n = type === "integer" ? fc.integer({ min: -1000, max: 1000 }) : fc.double({ min: -1000, max: 1000, noNaN: true }).map(round2);
  return fc
    .oneof(
      fc.tuple(n, n).chain(([a, b]) => {
        const [min, max] = a <= b ? [a, b] : [b, a];
        return fc.record({ constraints: fc.constant({ min, max }), default: fc.option(fc.constant(min)) });
      }),
      fc
        .record({ enum: fc.uniqueArray(n, { minLength: 1, maxLength: 3 }) as fc.Arbitrary<Json> })
        .chain((d) => fc.record({ enum: fc.constant(d.enum), default: fc.option(fc.constant((d.enum as number[])[0] as Json)) })),
      fc.record({ default: fc.option(n) }),
    )
    .map((d) => ({ type, ...dropNull(d) }));
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function dropNull(d: Record<string, Json | null | undefined>): FieldDef {
  return Object.fromEntries(Object.entries(d).filter(([, v]) => v !== null && v !== undefined)) as FieldDef;
}

/** A field of any type other than a reference, with constraints, default, enum or computed kind that fit it. */
function fieldDef(): fc.Arbitrary<FieldDef> {
  return fc.constantFrom(...FIELD_TYPES).chain((type): fc.Arbitrary<FieldDef> => {
    switch (type) {
      case "string":
        return fc.oneof(
          { weight: 4, arbitrary: stringField("string") },
          {
            weight: 1,
            arbitrary: fc.constantFrom("uuid", "sequence({prefix}-{n:05})", "sequence(N{n})").map((computed) => ({ type, computed })),
          },
        );
      case "text":
        return stringField("text");
      case "integer":
      case "number":
        return numberField(type);
      case "boolean":
        return fc.record({ default: fc.option(fc.boolean()) }).map((d) => ({ type, ...dropNull(d) }));
      case "email":
        return fc
          .record({ default: fc.option(fc.constant("someone@example.com")), maxLength: fc.option(fc.integer({ min: 30, max: 254 })) })
          .map(({ default: d, maxLength }) => ({ type, ...dropNull({ default: d, constraints: maxLength ? { maxLength } : null }) }));
      case "date":
        return fc.oneof(
          fc.constant({ type, computed: "now" }),
          fc.record({ default: fc.option(fc.constant("2030-01-15")) }).map((d) => ({ type, ...dropNull(d) })),
        );
      case "datetime":
        return fc.oneof(
          fc.constantFrom("now", "now_on_update").map((computed) => ({ type, computed })),
          fc.record({ default: fc.option(fc.constant("2030-01-15T10:00:00Z")) }).map((d) => ({ type, ...dropNull(d) })),
        );
      case "uuid":
        return fc.oneof(fc.constant({ type, computed: "uuid" }), fc.constant({ type }));
      case "array":
        return fc
          .record({
            items_type: fc.constantFrom("string", "integer", "number", "boolean", "date", "datetime", "uuid", "email", "object"),
            bounds: fc.option(fc.integer({ min: 0, max: 2 })),
            default: fc.option(fc.constant([] as Json[])),
          })
          .map(({ items_type, bounds, default: d }) => ({
            type,
            items_type,
            // An empty default only where the bounds allow an empty list.
            ...dropNull({ constraints: bounds === null ? null : { minLength: bounds, maxLength: bounds + 5 }, default: bounds ? null : d }),
          }));
      case "object":
        return fc.record({ default: fc.option(fc.constant({} as Json)) }).map((d) => ({ type, ...dropNull(d) }));
    }
  });
}

/** required and immutable, where they mean something (a computed field is never written by a client). */
function withFlags(def: FieldDef): fc.Arbitrary<FieldDef> {
  if (def.computed) return fc.constant(def);
  return fc.record({ required: fc.boolean(), immutable: fc.boolean() }).map(({ required, immutable }) => ({
    ...def,
    ...(required ? { required } : {}),
    ...(immutable ? { immutable } : {}),
  }));
}

/** A reference from an entity to one declared before it or to itself: the only cycles the compiler allows. */
function referenceDef(domain: string, targets: readonly string[]): fc.Arbitrary<FieldDef> {
  return fc
    .record({ to: fc.constantFrom(...targets), required: fc.boolean(), onDelete: fc.constantFrom("restrict", "cascade", "set_null", null) })
    .map(({ to, required, onDelete }) => {
      // A required reference cannot be cleared by set_null; and a required self-reference could never
      // get a first record, so a self-reference is optional.
      const self = to === targets[targets.length - 1];
      const req = required && !self;
      const on = req && onDelete === "set_null" ? "restrict" : onDelete;
      return {
        type: "uuid",
        ...(req ? { required: true } : {}),
        references: { entity: `entity/${domain}/${to}`, ...(on ? { on_delete: on } : {}) },
      };
    });
}

export interface EntityPlan {
  name: string;
  fields: FieldPlan[];
  mixins: string[];
  listTotal: "count" | "counter" | null;
  workflow: WorkflowPlan | null;
  route: RoutePlan | null;
  page: boolean;
}

interface WorkflowPlan {
  states: string[];
  terminal: string[];
  transitions: Record<string, string[]>;
  guards: Record<string, { require_fields?: string[]; condition?: string }>;
  sideEffects: Record<string, Json[]>;
}

interface RoutePlan {
  rule: string | null;
}

const STATE_NAMES = ["new", "open", "class", "select", "default", "import", "done", "closed", "in_progress", "none"];

function workflowPlan(entity: string, fields: readonly FieldPlan[]): fc.Arbitrary<WorkflowPlan> {
  const writable = fields.filter((f) => !f.def.computed);
  return fc.uniqueArray(fc.constantFrom(...STATE_NAMES), { minLength: 2, maxLength: 5 }).chain((states) => {
    const last = states[states.length - 1] as string;
    // A chain through every state (so each is reachable), some extra moves, the last state terminal.
    const chain: [string, string][] = states.slice(1).map((s, i) => [states[i] as string, s]);
    return fc
      .record({
        extra: fc.array(fc.tuple(fc.constantFrom(...states.slice(0, -1)), fc.constantFrom(...states)), { maxLength: 3 }),
        guarded: fc.subarray(chain.map(([a, b]) => `${a} -> ${b}`)),
        required: writable.length
          ? fc.subarray(
              writable.map((f) => f.name),
              { maxLength: Math.min(2, writable.length) },
            )
          : fc.constant([] as string[]),
        condition: writable.length ? fc.option(fc.constantFrom(...writable)) : fc.constant(null),
        emits: fc.boolean(),
      })
      .map(({ extra, guarded, required, condition, emits }) => {
        const transitions: Record<string, string[]> = Object.fromEntries(states.map((s) => [s, [] as string[]]));
        for (const [a, b] of [...chain, ...extra]) {
          if (a !== b && !(transitions[a] as string[]).includes(b)) (transitions[a] as string[]).push(b);
        }
        const guards: WorkflowPlan["guards"] = {};
        const cond = condition ? conditionFor(condition) : null;
        for (const move of guarded) {
          guards[move] = {
            ...(required.length ? { require_fields: required } : {}),
            ...(cond ? { condition: cond } : {}),
          };
          if (!required.length && !cond) guards[move] = { require_fields: [] };
        }
        const sideEffects: Record<string, Json[]> = {};
        if (emits && chain[0]) sideEffects[`${chain[0][0]} -> ${chain[0][1]}`] = [{ emit_event: `${entity}_moved` }];
        return { states, terminal: [last], transitions: { ...transitions, [last]: [] }, guards, sideEffects };
      });
  });
}

function entityPlan(nameArb: fc.Arbitrary<string>, domain: string, name: string, before: readonly string[]): fc.Arbitrary<EntityPlan> {
  const own = fc.uniqueArray(fc.record({ name: nameArb.filter((n) => !RESERVED_FIELDS.has(n)), def: fieldDef().chain(withFlags) }), {
    minLength: 1,
    maxLength: 6,
    selector: (f) => f.name,
  });
  const refs = fc.uniqueArray(
    fc.record({
      name: fc.constantFrom(...[...before, name].map((n) => `${n}_id`), "parent_id", "owner_id"),
      def: referenceDef(domain, [...before, name]),
    }),
    { maxLength: 2, selector: (f) => f.name },
  );
  return fc.tuple(own, refs).chain(([ownFields, refFields]) => {
    const fields = [...ownFields, ...refFields.filter((r) => !ownFields.some((f) => f.name === r.name))];
    const rules = fields.flatMap((f) => (f.def.computed ? [] : [conditionFor(f)].filter((r): r is string => r !== null)));
    return fc.record({
      name: fc.constant(name),
      fields: fc.constant(fields),
      mixins: fc.subarray([
        "mixin/stdlib/timestamped",
        "mixin/stdlib/identifiable",
        "mixin/stdlib/taggable",
        "mixin/stdlib/soft_deletable",
      ]),
      listTotal: fc.constantFrom("count", "counter", null),
      workflow: fc.option(workflowPlan(name, fields), { freq: 2 }),
      route: fc.option(fc.record({ rule: rules.length ? fc.option(fc.constantFrom(...rules), { freq: 3 }) : fc.constant(null) }), {
        freq: 8,
      }),
      page: fc.boolean(),
    });
  });
}

export interface DomainPlan {
  domain: string;
  entities: EntityPlan[];
  /** A name past PostgreSQL's limit put into one entity, as a field or as its table; null for a valid domain. */
  tooLong: TooLong | null;
}

export interface TooLong {
  entity: string;
  kind: "field" | "table";
  name: string;
}

/**
 * What validation must answer to a domain drawn with a name past the limit: the code, and the
 * contract file (relative to the domain) and JSON path it must be located at.
 */
export interface Refusal {
  code: "name.too_long";
  file: string;
  path: string[];
  name: string;
}

/**
 * A random domain plan: 1 to 4 entities with their workflows, routes and pages. With `tooLong`
 * (a weight from 0 to 1), that share of plans also gets one name past the limit, to be refused.
 */
export function domainPlan(options: { tooLong?: number } = {}): fc.Arbitrary<DomainPlan> {
  const fieldNames = nameArbitrary(longFieldName);
  // Entity names whose table (plural) and class name (PascalCase) differ from each other's too.
  const entityNames = fc.uniqueArray(nameArbitrary(longEntityName), {
    minLength: 1,
    maxLength: 4,
    selector: (n) => `${pluralize(n)}|${pascalCase(n)}`,
  });
  const share = options.tooLong ?? 0;
  return fc
    .tuple(fc.constantFrom("shop", "domain", "class", "order"), entityNames)
    .chain(([domain, names]) =>
      fc.tuple(
        fc.constant(domain),
        fc.tuple(...names.map((n, i) => entityPlan(fieldNames, domain, n, names.slice(0, i)))),
        share > 0
          ? fc.oneof(
              {
                weight: Math.round(share * 100),
                arbitrary: fc.record({
                  entity: fc.constantFrom(...names),
                  kind: fc.constantFrom("field" as const, "table" as const),
                  name: tooLongName,
                }) as fc.Arbitrary<TooLong | null>,
              },
              { weight: 100 - Math.round(share * 100), arbitrary: fc.constant(null) },
            )
          : fc.constant(null),
      ),
    )
    .map(([domain, entities, tooLong]) => ({
      domain,
      entities: entities.map((e) => ({ ...e, page: e.page && e.route !== null })),
      tooLong,
    }));
}

function contract(kind: string, name: string, domain: string, spec: Record<string, Json>): string {
  return `${JSON.stringify({ apiVersion: "charter/v1", kind, metadata: { name, domain }, spec }, null, 2)}\n`;
}

/** The contract files (relative path -> text) of a plan. */
export function renderDomain(plan: DomainPlan): Record<string, string> {
  const files: Record<string, string> = {};
  const { domain } = plan;
  for (const e of plan.entities) {
    const wfName = `${e.name}_flow`;
    const spec: Record<string, Json> = { fields: Object.fromEntries(e.fields.map((f) => [f.name, f.def])) };
    const long = plan.tooLong?.entity === e.name ? plan.tooLong : null;
    if (long?.kind === "field") (spec.fields as Record<string, Json>)[long.name] = { type: "string" };
    if (long?.kind === "table") spec.table = long.name;
    if (e.mixins.length) spec.mixins = e.mixins;
    if (e.mixins.includes("mixin/stdlib/identifiable")) spec.number_prefix = "REC";
    if (e.listTotal) spec.list_total = e.listTotal;
    if (e.workflow) {
      spec.state_machine = `workflow/${domain}/${wfName}`;
      const w = e.workflow;
      files[`workflows/${wfName}.contract.yaml`] = contract("Workflow", wfName, domain, {
        initial: w.states[0] as string,
        states: Object.fromEntries(
          w.states.map((s) => [
            s,
            { label: s, category: w.terminal.includes(s) ? "closed" : "open", ...(w.terminal.includes(s) ? { terminal: true } : {}) },
          ]),
        ),
        transitions: w.transitions,
        ...(Object.keys(w.guards).length ? { guards: w.guards } : {}),
        ...(Object.keys(w.sideEffects).length ? { side_effects: w.sideEffects } : {}),
      });
    }
    files[`entities/${e.name}.contract.yaml`] = contract("Entity", e.name, domain, spec);
    if (e.route) {
      const endpoints: Json[] = [
        { method: "GET", path: "/" },
        {
          method: "POST",
          path: "/",
          ...(e.route.rule
            ? { validation: [{ rule: e.route.rule, on_fail: { status: 422, error: "validation_error", message: "Refused" } }] }
            : {}),
        },
        { method: "GET", path: "/{id}" },
        { method: "PATCH", path: "/{id}" },
        { method: "DELETE", path: "/{id}" },
        ...(e.workflow ? [{ method: "PUT", path: "/{id}/state" }] : []),
      ];
      files[`routes/${e.name}_api.contract.yaml`] = contract("Route", `${e.name}_api`, domain, {
        entity: `entity/${domain}/${e.name}`,
        endpoints,
      });
    }
    if (e.page) {
      const views: Json[] = [{ type: "table", default: true }];
      if (e.workflow) views.push({ type: "kanban" });
      files[`pages/${e.name}_page.contract.yaml`] = contract("Page", `${e.name}_page`, domain, {
        route: `/${pluralize(e.name).replace(/_/g, "-")}`,
        generation_tier: "mechanical",
        entity: `entity/${domain}/${e.name}`,
        views,
      });
    }
  }
  return files;
}

/** The refusal validation owes a plan with a name past the limit, or null for a valid one. */
export function refusalOf(plan: DomainPlan): Refusal | null {
  const t = plan.tooLong;
  if (t === null) return null;
  return {
    code: "name.too_long",
    file: `entities/${t.entity}.contract.yaml`,
    path: t.kind === "field" ? ["spec", "fields", t.name] : ["spec", "table"],
    name: t.name,
  };
}

export interface RandomDomain {
  /** The plan, for a readable counterexample. */
  plan: DomainPlan;
  /** The contract files, relative path -> text. */
  files: Record<string, string>;
  /** What validation must refuse; null when the domain is valid and the whole pipeline must work. */
  refusal: Refusal | null;
}

/**
 * A random domain. By default every one is valid; with `tooLong` (a share, 0 to 1) that share of
 * them carries one name past PostgreSQL's limit and a `refusal` the validation must give.
 */
export function randomDomain(options: { tooLong?: number } = {}): fc.Arbitrary<RandomDomain> {
  return domainPlan(options).map((plan) => ({ plan, files: renderDomain(plan), refusal: refusalOf(plan) }));
}
