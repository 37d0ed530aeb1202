import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  FQN_PATTERN,
  GRAPH_EDGE_PATTERN,
  NAME_PATTERN,
  NUMBER_PREFIX_PATTERN,
  parseContractSource,
  SCHEMA_DIR,
  SCHEMA_FILES,
  validateContractSchema,
} from "../../src/contracts/index.js";

function check(yaml: string) {
  const r = parseContractSource(yaml, "/tmp/t.contract.yaml", "t.contract.yaml");
  if (!("contract" in r)) throw new Error(`did not parse: ${JSON.stringify(r.findings)}`);
  return validateContractSchema(r.contract);
}

const entity = (fields: string, spec = "", meta = "  name: product\n  domain: shop\n") =>
  `apiVersion: charter/v1\nkind: Entity\nmetadata:\n${meta}spec:\n${spec}  fields:\n${fields}`;

describe("JSON Schemas", () => {
  it("are draft 2020-12 documents and carry the same patterns as the code", () => {
    const all = SCHEMA_FILES.map((f) => readFileSync(SCHEMA_DIR + f, "utf8")).join("\n");
    for (const f of SCHEMA_FILES)
      expect(JSON.parse(readFileSync(SCHEMA_DIR + f, "utf8")).$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    for (const p of [NAME_PATTERN, FQN_PATTERN, GRAPH_EDGE_PATTERN, NUMBER_PREFIX_PATTERN]) expect(all).toContain(JSON.stringify(p));
  });

  it("accept a valid contract of every kind", () => {
    const kinds: Record<string, string> = {
      Entity: "fields:\n    a: {type: string}",
      Mixin: "fields:\n    a: {type: string}",
      Workflow: "initial: a\n  states: {a: {label: A}}\n  transitions: {a: []}",
      Route: "entity: entity/d/e\n  endpoints:\n    - {method: GET, path: /es}",
      Page: "route: /es\n  entity: entity/d/e\n  generation_tier: mechanical",
      Agent: "trigger: e_created\n  input: {entity: entity/d/e}\n  output: {updates: [x]}",
      Infra: "category: auth\n  config: {provider: jwt, roles: [admin]}",
    };
    for (const [kind, spec] of Object.entries(kinds)) {
      expect(check(`apiVersion: charter/v1\nkind: ${kind}\nmetadata: {name: x, domain: d}\nspec:\n  ${spec}\n`), kind).toEqual([]);
    }
  });

  it("words a bad name the way the Healer classifies it, located at the value", () => {
    const f = check(entity("    a: {type: string}\n", "", "  name: TicketItem\n  domain: shop\n"));
    expect(f).toEqual([
      expect.objectContaining({
        code: "schema.pattern",
        message: "'TicketItem' does not match '^[a-z][a-z0-9_]*$'",
        line: 4,
        column: 9,
        path: "/metadata/name",
        schemaPath: "common.schema.json#/$defs/name/pattern",
        severity: "error",
      }),
    ]);
  });

  it("reports a missing required property", () => {
    const f = check("apiVersion: charter/v1\nkind: Entity\nmetadata: {name: a, domain: b}\nspec:\n  icon: box\n");
    expect(f.map((x) => x.message)).toEqual(["'fields' is a required property"]);
    expect(f[0]).toMatchObject({ line: 5, path: "/spec" });
  });

  it("reports an invalid enum value with the allowed values", () => {
    const f = check(entity("    p:\n      type: string\n", "", "  name: a\n  domain: b\n").replace("type: string", "type: strng"));
    expect(f[0]?.message).toBe(
      "'strng' is not one of ['string', 'integer', 'number', 'boolean', 'text', 'array', 'object', 'datetime', 'date', 'uuid', 'email', 'duration']",
    );
  });

  it("accepts each computed form and refuses others as not valid under any schema", () => {
    for (const c of ["now", "now_on_update", "current_user", "uuid", "sequence({prefix}-{n:05})"]) {
      expect(check(entity(`    a:\n      type: string\n      computed: "${c}"\n`)), c).toEqual([]);
    }
    const f = check(entity("    a:\n      type: string\n      computed: tomorrow\n"));
    expect(f.map((x) => x.message)).toEqual(["'tomorrow' is not valid under any of the given schemas"]);
  });

  it("refuses field properties outside the whitelist, pointing at the key", () => {
    const f = check(entity("    a:\n      type: string\n      required_when: b\n      conditional_required: true\n"));
    expect(f.map((x) => x.message).sort()).toEqual([
      "Additional properties are not allowed ('conditional_required' was unexpected)",
      "Additional properties are not allowed ('required_when' was unexpected)",
    ]);
    expect(f.find((x) => x.message.includes("required_when"))).toMatchObject({ line: 10, column: 7, path: "/spec/fields/a/required_when" });
  });

  it("allows only min, max, maxLength, minLength and pattern as constraints", () => {
    expect(check(entity("    a:\n      type: string\n      constraints: {minLength: 1, maxLength: 5, pattern: '^a'}\n"))).toEqual([]);
    expect(check(entity("    a:\n      type: integer\n      constraints: {min: 1, max: 5}\n"))).toEqual([]);
    const f = check(entity("    a:\n      type: string\n      constraints: {unique: true}\n"));
    expect(f.map((x) => x.message)).toEqual(["Additional properties are not allowed ('unique' was unexpected)"]);
  });

  it("checks references: FQN, graph edge pattern, direction, and no unknown keys", () => {
    const ref = (body: string) => check(entity(`    c:\n      type: uuid\n      references:\n${body}`));
    expect(
      ref(
        "        entity: entity/shop/category\n        display: name\n        graph_edge: IN_CATEGORY\n        graph_direction: reverse\n",
      ),
    ).toEqual([]);
    expect(ref("        entity: Entity/Shop/category\n").map((x) => x.message)).toEqual([
      `'Entity/Shop/category' does not match '${FQN_PATTERN}'`,
    ]);
    expect(ref("        entity: entity/shop/category\n        graph_edge: in_category\n").map((x) => x.message)).toEqual([
      "'in_category' does not match '^[A-Z][A-Z0-9_]*$'",
    ]);
    expect(ref("        entity: entity/shop/category\n        graph_direction: up\n").map((x) => x.message)).toEqual([
      "'up' is not one of ['forward', 'reverse']",
    ]);
    expect(ref("        display: name\n").map((x) => x.message)).toEqual(["'entity' is a required property"]);
  });

  it("checks number_prefix and field names", () => {
    expect(check(entity("    a: {type: string}\n", "  number_prefix: TKT\n"))).toEqual([]);
    for (const bad of ["T", "tkt", "TOOLONGX", "T1"]) {
      expect(check(entity("    a: {type: string}\n", `  number_prefix: ${bad}\n`)).map((x) => x.message)).toEqual([
        `'${bad}' does not match '^[A-Z]{2,6}$'`,
      ]);
    }
    const f = check(entity("    BadField: {type: string}\n"));
    expect(f).toEqual([
      expect.objectContaining({
        message: "'BadField' does not match '^[a-z][a-z0-9_]*$'",
        path: "/spec/fields/BadField",
        line: 8,
        column: 5,
      }),
    ]);
  });

  it("refuses another apiVersion with a clear message, and an unknown kind", () => {
    const f = check("apiVersion: charter/v2\nkind: Entity\nmetadata: {name: a, domain: b}\nspec: {fields: {a: {type: string}}}\n");
    expect(f.map((x) => x.message)).toEqual(["unsupported apiVersion 'charter/v2': expected 'charter/v1'"]);
    const k = check("apiVersion: charter/v1\nkind: Table\nmetadata: {name: a, domain: b}\nspec: {}\n");
    expect(k.map((x) => x.message)).toEqual(["'Table' is not one of ['Entity', 'Workflow', 'Route', 'Page', 'Agent', 'Mixin', 'Infra']"]);
  });

  it("refuses unknown envelope fields and wrong types, collecting every finding", () => {
    const f = check(
      "apiVersion: charter/v1\nkind: Entity\nmetadata: {name: 5, domain: b, owner: me}\nextra: 1\nrequires: entity/a/b\nspec: {fields: {a: {type: string, required: 'yes'}}}\n",
    );
    expect(f.map((x) => x.message).sort()).toEqual(
      [
        "'yes' is not of type 'boolean'",
        "5 is not of type 'string'",
        "'entity/a/b' is not of type 'array'",
        "Additional properties are not allowed ('extra' was unexpected)",
        "Additional properties are not allowed ('owner' was unexpected)",
      ].sort(),
    );
  });

  it("checks the kind-specific required fields and enums", () => {
    const page = check(
      "apiVersion: charter/v1\nkind: Page\nmetadata: {name: a, domain: b}\nspec: {route: tickets, entity: entity/b/t, generation_tier: magic}\n",
    );
    expect(page.map((x) => x.message).sort()).toEqual(
      ["'magic' is not one of ['mechanical', 'creative']", "'tickets' does not match '^/[a-z0-9\\\\-/]*$'"].sort(),
    );
    const infra = check(
      "apiVersion: charter/v1\nkind: Infra\nmetadata: {name: a, domain: b}\nspec: {category: auth, config: {provider: saml}}\n",
    );
    expect(infra.map((x) => x.message)).toEqual(["'saml' is not one of ['jwt', 'external']"]);
    const wf = check("apiVersion: charter/v1\nkind: Workflow\nmetadata: {name: a, domain: b}\nspec: {initial: a, states: {a: {}}}\n");
    expect(wf.map((x) => x.message)).toEqual(["'transitions' is a required property"]);
  });
});

describe("precompiled validator", () => {
  it("is in step with schemas/ (npm run build:validator regenerates it)", async () => {
    const { spawnSync } = await import("node:child_process");
    const r = spawnSync(process.execPath, ["scripts/build-validator.mjs", "--check"], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("has spec types in step with schemas/ (npm run build:spec-types regenerates them)", async () => {
    const { spawnSync } = await import("node:child_process");
    const r = spawnSync(process.execPath, ["scripts/build-spec-types.mjs", "--check"], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
