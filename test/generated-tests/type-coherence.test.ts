import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import type { DomainIR } from "../../src/compiler/index.js";
import { startGeneratedBackend } from "../support/backend.js";
import { checkFiles, entityYaml, writeDomain } from "../support/domain.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";

/**
 * Every field type with each `computed` kind, default, enum and constraint it allows: a field that
 * validates is stored and returned as sent (or as its default or computed value) by both
 * repositories; one that cannot be is a located validation error. One entity per case, all in one
 * domain, so the app is generated and started once per repository.
 */
interface Valid {
  /** The field's definition, as YAML lines under the field name (6 spaces deep). */
  field: string;
  /** Sent on create; absent: the field is left out (a default or a computed value fills it). */
  send?: unknown;
  /** What the API returns: a value, or a check of it. */
  expect: unknown | ((v: unknown) => boolean);
  /** Values a create must refuse with 422 (the schema allows none of them). */
  refuse?: unknown[];
}

const UUID = "0b6e3c9e-4f1a-4c3b-9d2e-5a6b7c8d9e0f";
const isUuid = (v: unknown): boolean => typeof v === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v);
const isDate = (v: unknown): boolean => typeof v === "string" && /^\d{4}-\d{2}-\d{2}$/.test(v);
const isInstant = (v: unknown): boolean => typeof v === "string" && /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v));
const sameInstant =
  (iso: string) =>
  (v: unknown): boolean =>
    typeof v === "string" && Date.parse(v) === Date.parse(iso);

const VALID: Record<string, Valid> = {
  string_plain: { field: "type: string", send: "hello", expect: "hello" },
  string_required: { field: "type: string\nrequired: true", send: "x", expect: "x" },
  string_default: { field: "type: string\ndefault: fallback", expect: "fallback" },
  string_enum: { field: "type: string\nenum: [low, high]", send: "high", expect: "high" },
  string_enum_default: { field: "type: string\nenum: [low, high]\ndefault: low", expect: "low" },
  string_constraints: {
    field: "type: string\nconstraints: {minLength: 2, maxLength: 5, pattern: '^[a-z]+$'}",
    send: "abc",
    expect: "abc",
  },
  string_immutable: { field: "type: string\nimmutable: true", send: "fixed", expect: "fixed" },
  string_computed_uuid: { field: "type: string\ncomputed: uuid", expect: isUuid },
  string_computed_sequence: { field: "type: string\ncomputed: 'sequence(N-{n:04})'", expect: (v: unknown) => v === "N-0001" },
  // Without an auth contract every caller is the anonymous administrator (app/principal.py).
  string_computed_current_user: { field: "type: string\ncomputed: current_user", expect: "anonymous" },
  text_plain: { field: "type: text", send: "line one\nline two", expect: "line one\nline two" },
  text_default: { field: "type: text\ndefault: a long default", expect: "a long default" },
  text_constraints: { field: "type: text\nconstraints: {maxLength: 20}", send: "short", expect: "short" },
  email_plain: { field: "type: email", send: "a@example.com", expect: "a@example.com" },
  email_default: { field: "type: email\ndefault: team@example.com", expect: "team@example.com" },
  email_enum: { field: "type: email\nenum: [a@example.com, b@example.com]", send: "b@example.com", expect: "b@example.com" },
  email_constraints: { field: "type: email\nconstraints: {maxLength: 40}", send: "c@example.com", expect: "c@example.com" },
  uuid_plain: { field: "type: uuid", send: UUID, expect: UUID },
  uuid_default: { field: `type: uuid\ndefault: '${UUID}'`, expect: UUID },
  uuid_computed: { field: "type: uuid\ncomputed: uuid", expect: isUuid },
  integer_plain: { field: "type: integer", send: 42, expect: 42 },
  integer_default: { field: "type: integer\ndefault: 7", expect: 7 },
  integer_zero_default: { field: "type: integer\ndefault: 0", expect: 0 },
  // A Literal compares values: Python's True == 1, False == 0.
  integer_enum: { field: "type: integer\nenum: [1, 2, 3]", send: 2, expect: 2, refuse: [true, "2", 2.5] },
  integer_constraints: { field: "type: integer\nconstraints: {min: 1, max: 100}", send: 100, expect: 100 },
  integer_large: { field: "type: integer", send: 9_007_199_254_740_991, expect: 9_007_199_254_740_991 },
  number_plain: { field: "type: number", send: 2.5, expect: 2.5 },
  number_default: { field: "type: number\ndefault: 1.5", expect: 1.5 },
  number_integral: { field: "type: number", send: 3, expect: 3 },
  number_constraints: { field: "type: number\nconstraints: {min: -1.5, max: 10}", send: -1.5, expect: -1.5 },
  number_enum: { field: "type: number\nenum: [0.5, 1.5]", send: 1.5, expect: 1.5 },
  number_enum_zero: { field: "type: number\nenum: [0, 1.5]", send: 0, expect: 0, refuse: [false, "0"] },
  boolean_plain: { field: "type: boolean", send: true, expect: true },
  boolean_false: { field: "type: boolean", send: false, expect: false },
  boolean_default: { field: "type: boolean\ndefault: false", expect: false },
  boolean_enum: { field: "type: boolean\nenum: [true]", send: true, expect: true, refuse: [1, "true"] },
  date_plain: { field: "type: date", send: "2030-01-15", expect: "2030-01-15" },
  date_default: { field: "type: date\ndefault: '2030-02-01'", expect: "2030-02-01" },
  date_enum: { field: "type: date\nenum: ['2030-01-01', '2031-01-01']", send: "2031-01-01", expect: "2031-01-01" },
  date_computed_now: { field: "type: date\ncomputed: now", expect: isDate },
  date_computed_now_on_update: { field: "type: date\ncomputed: now_on_update", expect: isDate },
  datetime_plain: { field: "type: datetime", send: "2030-01-15T10:30:00Z", expect: sameInstant("2030-01-15T10:30:00Z") },
  datetime_offset: { field: "type: datetime", send: "2030-01-15T10:30:00+02:00", expect: sameInstant("2030-01-15T08:30:00Z") },
  datetime_default: { field: "type: datetime\ndefault: '2030-03-01T00:00:00Z'", expect: sameInstant("2030-03-01T00:00:00Z") },
  datetime_computed_now: { field: "type: datetime\ncomputed: now", expect: isInstant },
  datetime_computed_now_on_update: { field: "type: datetime\ncomputed: now_on_update", expect: isInstant },
  object_plain: { field: "type: object", send: { a: 1, b: [true, "x"], c: { d: null } }, expect: { a: 1, b: [true, "x"], c: { d: null } } },
  object_default: { field: "type: object\ndefault: {x: 1}", expect: { x: 1 } },
  array_untyped: { field: "type: array", send: [1, "a", { b: 2 }], expect: [1, "a", { b: 2 }] },
  array_default: { field: "type: array\nitems_type: string\ndefault: [a, b]", expect: ["a", "b"] },
  array_empty_default: { field: "type: array\nitems_type: integer\ndefault: []", expect: [] },
  array_string: { field: "type: array\nitems_type: string", send: ["a", "b"], expect: ["a", "b"] },
  array_string_constraints: {
    field: "type: array\nitems_type: string\nconstraints: {minLength: 1, maxLength: 3}",
    send: ["a", "b"],
    expect: ["a", "b"],
  },
  array_text: { field: "type: array\nitems_type: text", send: ["x y"], expect: ["x y"] },
  array_email: { field: "type: array\nitems_type: email", send: ["a@example.com"], expect: ["a@example.com"] },
  array_integer: { field: "type: array\nitems_type: integer", send: [1, 2], expect: [1, 2] },
  array_number: { field: "type: array\nitems_type: number", send: [1.5, 2], expect: [1.5, 2] },
  array_boolean: { field: "type: array\nitems_type: boolean", send: [true, false], expect: [true, false] },
  array_date: { field: "type: array\nitems_type: date\nrequired: true", send: ["2030-01-15"], expect: ["2030-01-15"] },
  array_datetime: {
    field: "type: array\nitems_type: datetime",
    send: ["2030-01-15T10:30:00Z"],
    expect: (v: unknown) => Array.isArray(v) && v.length === 1 && sameInstant("2030-01-15T10:30:00Z")(v[0]),
  },
  array_uuid: { field: "type: array\nitems_type: uuid", send: [UUID], expect: [UUID] },
  array_object: { field: "type: array\nitems_type: object", send: [{ k: 1 }], expect: [{ k: 1 }] },
};

/** Definitions that must not validate, and the finding (code and path) that says why. */
const INVALID: Record<string, { field: string; code: string; path: string }> = {
  default_above_max: { field: "type: integer\nconstraints: {max: 10}\ndefault: 11", code: "field.default_constraint", path: "default" },
  // A 64-bit "no limit" is not an exact JSON number: the app would refuse it when sent back.
  default_beyond_json: { field: "type: integer\ndefault: 9223372036854775807", code: "field.default_constraint", path: "default" },
  default_below_min: { field: "type: number\nconstraints: {min: 0}\ndefault: -1", code: "field.default_constraint", path: "default" },
  default_too_long: {
    field: "type: string\nconstraints: {maxLength: 3}\ndefault: abcd",
    code: "field.default_constraint",
    path: "default",
  },
  default_too_short: { field: "type: text\nconstraints: {minLength: 3}\ndefault: ab", code: "field.default_constraint", path: "default" },
  default_off_pattern: {
    field: "type: string\nconstraints: {pattern: '^[a-z]+$'}\ndefault: ABC",
    code: "field.default_constraint",
    path: "default",
  },
  default_bad_date: { field: "type: date\ndefault: tomorrow", code: "field.default_type", path: "default" },
  default_bad_datetime: { field: "type: datetime\ndefault: '2030-13-01T00:00:00Z'", code: "field.default_type", path: "default" },
  default_bad_uuid: { field: "type: uuid\ndefault: not-a-uuid", code: "field.default_type", path: "default" },
  default_bad_email: { field: "type: email\ndefault: nobody", code: "field.default_type", path: "default" },
  default_bad_items: { field: "type: array\nitems_type: integer\ndefault: [a]", code: "field.default_type", path: "default" },
  enum_bad_date: { field: "type: date\nenum: ['2030-01-01', soon]", code: "field.enum_value", path: "enum/1" },
  enum_above_max: { field: "type: integer\nenum: [1, 50]\nconstraints: {max: 10}", code: "field.enum_constraint", path: "enum/1" },
  default_and_computed: {
    field: "type: datetime\ncomputed: now\ndefault: '2030-01-01T00:00:00Z'",
    code: "field.default_computed",
    path: "default",
  },
  computed_now_string: { field: "type: string\ncomputed: now", code: "field.computed_type", path: "type" },
  computed_uuid_integer: { field: "type: integer\ncomputed: uuid", code: "field.computed_type", path: "type" },
  computed_current_user_uuid: { field: "type: uuid\ncomputed: current_user", code: "field.computed_type", path: "type" },
  min_on_string: { field: "type: string\nconstraints: {min: 1}", code: "field.constraint_type", path: "constraints" },
  pattern_on_integer: { field: "type: integer\nconstraints: {pattern: '^1'}", code: "field.constraint_type", path: "constraints" },
  pattern_on_array: {
    field: "type: array\nitems_type: integer\nconstraints: {pattern: '^1'}",
    code: "field.constraint_type",
    path: "constraints",
  },
  enum_on_object: { field: "type: object\nenum: [a]", code: "field.enum_type", path: "enum" },
  enum_on_array: { field: "type: array\nenum: [a]", code: "field.enum_type", path: "enum" },
  items_type_on_string: { field: "type: string\nitems_type: string", code: "field.items_type", path: "items_type" },
};

const fieldYaml = (name: string, def: string): string =>
  `    ${name}:\n${def
    .split("\n")
    .map((l) => `      ${l}`)
    .join("\n")}\n`;

const route = (entity: string): string => `apiVersion: charter/v1
kind: Route
metadata: {name: ${entity}_api, domain: shop}
spec:
  entity: entity/shop/${entity}
  endpoints:
    - {method: GET, path: /}
    - {method: POST, path: /}
    - {method: GET, path: "/{id}"}
`;

describe("field types, computed kinds, defaults and constraints that do not validate", () => {
  it.each(Object.entries(INVALID))("%s is a located finding", (name, c) => {
    const r = checkFiles({ "entities/thing.contract.yaml": entityYaml("thing", fieldYaml(name, c.field)) });
    expect(r.ir, JSON.stringify(r.findings)).toBeNull();
    expect(r.findings.map((f) => [f.code, f.path, f.file.endsWith("thing.contract.yaml"), f.line > 0])).toContainEqual([
      c.code,
      `/spec/fields/${name}/${c.path}`,
      true,
      true,
    ]);
  });
});

describe("field types, computed kinds, defaults and constraints that validate", () => {
  let domain: string;
  let ir: DomainIR;
  let root: string;
  beforeAll(() => {
    const files: Record<string, string> = {};
    for (const [name, c] of Object.entries(VALID)) {
      // `value` on every entity: a case whose only field is computed still has something to send.
      files[`entities/${name}.contract.yaml`] = entityYaml(name, fieldYaml("value", c.field) + fieldYaml("label", "type: string"));
      files[`routes/${name}_api.contract.yaml`] = route(name);
    }
    domain = writeDomain(files);
    const checked = checkDomain(domain);
    if (!checked.ir) throw new Error(`does not compile: ${JSON.stringify(checked.findings)}`);
    expect(checked.findings.filter((f) => f.severity === "error")).toEqual([]);
    ir = checked.ir;
    root = mkdtempSync(join(tmpdir(), "charter-types-"));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  for (const backend of ["memory", "postgres"] as const) {
    it(`stores and returns every case on ${backend}`, async () => {
      const app = await startGeneratedBackend({
        domainDir: domain,
        outDir: join(root, backend),
        backend,
        ...(backend === "postgres" ? { databaseUrl: databaseUrl(freshDatabase("type_coherence")) } : {}),
      });
      const failures: string[] = [];
      try {
        for (const [name, c] of Object.entries(VALID)) {
          const entity = ir.entities.find((e) => e.name === name);
          if (!entity) throw new Error(`no entity ${name}`);
          const body: Record<string, unknown> = { label: name };
          if ("send" in c) body.value = c.send;
          const check = (what: string, v: unknown): void => {
            const ok =
              typeof c.expect === "function" ? (c.expect as (v: unknown) => boolean)(v) : JSON.stringify(v) === JSON.stringify(c.expect);
            if (!ok)
              failures.push(
                `${name} (${what}): got ${JSON.stringify(v)}, expected ${typeof c.expect === "function" ? "a match" : JSON.stringify(c.expect)}`,
              );
          };
          const created = await fetch(`${app.url}${entity.basePath}/`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          const record = (await created.json()) as Record<string, unknown>;
          if (created.status !== 201) {
            failures.push(`${name} (create): ${created.status} ${JSON.stringify(record)}`);
            continue;
          }
          check("create", record.value);
          for (const bad of c.refuse ?? []) {
            const refused = await fetch(`${app.url}${entity.basePath}/`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ label: name, value: bad }),
            });
            if (refused.status !== 422) failures.push(`${name} (refuse ${JSON.stringify(bad)}): ${refused.status} ${await refused.text()}`);
          }
          const got = await fetch(`${app.url}${entity.basePath}/${record.id}`);
          const fetched = (await got.json()) as Record<string, unknown>;
          if (got.status !== 200) failures.push(`${name} (get): ${got.status} ${JSON.stringify(fetched)}`);
          else check("get", fetched.value);
          const listed = await fetch(`${app.url}${entity.basePath}/`);
          const page = (await listed.json()) as { items?: Record<string, unknown>[] };
          const item = page.items?.find((r) => r.id === record.id);
          if (listed.status !== 200 || !item) failures.push(`${name} (list): ${listed.status} ${JSON.stringify(page).slice(0, 300)}`);
          else check("list", item.value);
        }
        expect(failures, app.logs().slice(-3000)).toEqual([]);
      } finally {
        await app.stop();
      }
    }, 600_000);
  }
});
