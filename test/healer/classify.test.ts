import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { classifyError, Healer, missingObjectOf, notFixableDiagnostic } from "../../src/healer/index.js";
import { BASE_DOMAIN, brokenExamples, makeProject, TIER1 } from "./helpers.js";

describe("the Healer's classification patterns", () => {
  it.each([
    ["'TicketItem' does not match '^[a-z][a-z0-9_]*$'", "naming", 1, "low"],
    [
      "'Entity/Shop/Customer' does not match '^(entity|workflow|route|page|agent|mixin|infra)/[a-z][a-z0-9_]*/[a-z][a-z0-9_]*$'",
      "fqn_format",
      1,
      "low",
    ],
    ["'entity/x' does not match the FQN pattern", "fqn_format", 1, "low"],
    ["'placedBy' does not match '^[A-Z][A-Z0-9_]*$'", "graph_edge", 1, "low"],
    ["'ord-1' does not match '^[A-Z]{2,6}$'", "number_prefix", 1, "low"],
    ["'fields' is a required property", "missing_field", 2, "medium"],
    ["'whenever' is not valid under any of the given schemas", "schema_mismatch", 2, "medium"],
    ["'urgent' is not one of ['low', 'medium', 'high']", "invalid_enum", 2, "medium"],
    ["unresolved reference 'entity/helpdesk/agent'", "missing_reference", 2, "high"],
    ["dependency cycle: entity/a/x -> entity/a/y -> entity/a/x", "dependency_cycle", 2, "high"],
  ] as const)("%s -> %s, tier %i, %s", (message, errorType, tier, priority) => {
    const c = classifyError({ source: "validation", message });
    expect(c).toMatchObject({ errorType, tier, priority, fixableBy: "contract" });
  });

  it("a runtime error with status 500 or above is runtime_500, tier 3, critical", () => {
    expect(classifyError({ source: "runtime", message: "KeyError: 'priority'", statusCode: 500 })).toMatchObject({
      errorType: "runtime_500",
      tier: 3,
      priority: "critical",
      fixableBy: "contract",
    });
    expect(classifyError({ source: "runtime", message: "upstream failed with status 503" })).toMatchObject({ errorType: "runtime_500" });
  });

  it("another runtime exception is runtime_exception, tier 3, high", () => {
    expect(classifyError({ source: "runtime", message: "ValueError: bad input", statusCode: 400 })).toMatchObject({
      errorType: "runtime_exception",
      tier: 3,
      priority: "high",
      fixableBy: "contract",
    });
  });

  it("a missing column the contracts define is database drift: tier 3, critical, not a contract or generator fix", () => {
    const defines = (kind: string, name: string) => kind === "column" && name === "total_amount";
    const c = classifyError({ source: "runtime", message: 'column "total_amount" does not exist', statusCode: 500, defines });
    expect(c).toMatchObject({ errorType: "database_drift", tier: 3, priority: "critical", fixableBy: "data" });
    expect(notFixableDiagnostic(c)).toMatch(
      /database is behind the contracts \(column "total_amount" does not exist\).*--target migrations/,
    );
  });

  it("a missing column the contracts do not define is a generator bug", () => {
    const defines = () => false;
    const c = classifyError({ source: "runtime", message: 'column "total_amount" does not exist', statusCode: 500, defines });
    expect(c).toMatchObject({ errorType: "runtime_500", tier: 3, priority: "critical", fixableBy: "generator" });
    expect(notFixableDiagnostic(c)).toMatch(/generator bug \(column "total_amount" does not exist and no contract defines it\)/);
  });

  it.each([
    ['asyncpg.exceptions.UndefinedColumnError: column "phone" does not exist', "column", "phone"],
    ["UndefinedColumnError: column t.phone does not exist", "column", "phone"],
    ['column "phone" of relation "customers" does not exist', "column", "phone"],
    ['asyncpg.exceptions.UndefinedTableError: relation "public.customers" does not exist', "table", "customers"],
    ["sqlite3.OperationalError: no such table: customers", "table", "customers"],
  ] as const)("drift: %s names the %s %s", (message, kind, name) => {
    expect(missingObjectOf(message)).toEqual({ kind, name });
    expect(classifyError({ source: "runtime", message, statusCode: 500 }).errorType).toBe("database_drift");
  });

  it("an unknown message keeps an empty type and waits for a proposer's judgement (tier 2)", () => {
    expect(classifyError({ source: "validation", message: "something odd happened" })).toMatchObject({
      errorType: "",
      tier: 2,
      priority: "medium",
      fixableBy: "contract",
    });
    expect(classifyError({ source: "runtime", message: "something odd happened" })).toMatchObject({
      errorType: "runtime_exception",
      fixableBy: "contract",
    });
  });
});

describe("errors no contract change can fix", () => {
  it.each([
    ["generator", 'invalid input syntax for type uuid: "abc"'],
    ["generator", "ValueError: invalid UUID 'abc'"],
    ["data", 'asyncpg.exceptions.UndefinedColumnError: column "x" does not exist'],
    ["generator", 'syntax error at or near "FROM"'],
    ["generator", "ImportError: cannot import name 'Foo'"],
    ["generator", "ModuleNotFoundError: No module named 'app.routes.x'"],
    ["generator", "NameError: name 'TicketModel' is not defined"],
    ["generator", "AttributeError: 'NoneType' object has no attribute 'id'"],
    ["data", 'duplicate key value violates unique constraint "tickets_pkey"'],
    ["data", 'insert or update on table "ticket" violates foreign key constraint "ticket_customer_id_fkey"'],
    ["data", 'null value in column "title" of relation "ticket" violates not-null constraint'],
    ["data", "connection refused"],
    ["data", "asyncpg: timeout while connecting"],
  ] as const)("%s: %s", (fixableBy, message) => {
    const c = classifyError({ source: "runtime", message, statusCode: 500 });
    expect(c.fixableBy).toBe(fixableBy);
    expect(c.tier).toBe(3);
  });
});

describe("findings are classified by their code, not their wording", () => {
  it.each(brokenExamples())("the finding of examples/broken/$type classifies as $type by its code", ({ type, dir }) => {
    const [f] = checkDomain(dir).findings.filter((x) => x.severity === "error");
    if (!f) throw new Error(`${dir} has no error`);
    // The wording is replaced: only the code and schema path are left to go by.
    const c = classifyError({ source: "validation", message: "reworded by a newer validator", code: f.code, schemaPath: f.schemaPath });
    expect(c.errorType).toBe(type);
    expect(c.tier).toBe(TIER1.has(type) ? 1 : 2);
  });

  it.each([
    ["schema.additionalProperties", "", "unknown_property", 2],
    ["schema.type", "/$defs/field/properties/required/type", "schema_mismatch", 2],
    ["schema.pattern", "/$defs/field/properties/constraints/properties/pattern/pattern", "schema_mismatch", 2],
    ["yaml.syntax", "", "yaml_syntax", 2],
    ["expr.syntax", "", "invalid_expression", 2],
  ] as const)("%s -> %s", (code, schemaPath, errorType, tier) => {
    expect(
      classifyError({ source: "validation", message: "Additional properties not allowed ('colour' was unexpected)", code, schemaPath }),
    ).toMatchObject({
      errorType,
      tier,
      fixableBy: "contract",
    });
  });

  it("an unknown property found by a scan becomes an unknown_property ticket", async () => {
    const root = makeProject(BASE_DOMAIN);
    const file = join(root, "domains/shop/entities/customer.contract.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("spec:\n", "spec:\n  colour: blue\n"));
    const healer = new Healer({ projectRoot: root, console: null, env: {}, proposer: null });
    const { tickets } = await healer.scan();
    expect(tickets.map((t) => [t.ticket.error_type, t.ticket.tier, t.ticket.context.code])).toEqual([
      ["unknown_property", 2, "schema.additionalProperties"],
    ]);
    await healer.close();
  });

  it("reports without a code still go by their message", () => {
    expect(classifyError({ source: "manual", message: "'x' is a required property" })).toMatchObject({ errorType: "missing_field" });
  });
});
