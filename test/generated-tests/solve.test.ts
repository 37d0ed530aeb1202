import { describe, expect, it } from "vitest";
import { parseExpression } from "../../src/contracts/expression.js";
import { evaluate, fieldAccepts, force, sampleValue } from "../../src/generators/tests/solve.js";
import { fieldIR } from "../support/field-ir.js";

const field = fieldIR;

const FIELDS = new Map(
  [
    field("priority", "string", { enum: ["low", "medium", "high", "critical"] }),
    field("description", "text"),
    field("estimate", "number", { constraints: { min: 0, max: 1000 } }),
    field("points", "integer", { constraints: { min: 0, max: 10 } }),
    field("company", "string"),
    field("plan", "string", { enum: ["free", "pro", "enterprise"] }),
    field("escalated", "boolean"),
  ].map((f) => [f.name, f]),
);

describe("rule solving for the generated suite", () => {
  it("evaluates like the generated app: missing values never raise", () => {
    expect(evaluate(parseExpression("len(description) >= 20"), {})).toBe(false);
    expect(evaluate(parseExpression("estimate <= 200"), { estimate: null })).toBe(false);
    expect(evaluate(parseExpression("estimate == null or estimate <= 200"), { estimate: null })).toBe(true);
    expect(evaluate(parseExpression("plan in ['pro', 'enterprise']"), { plan: "pro" })).toBe(true);
    expect(evaluate(parseExpression("not is_set(company)"), { company: "" })).toBe(true);
  });

  it.each([
    ["priority != 'critical' or len(description) >= 20", { priority: "medium", description: "short" }],
    ["estimate == null or estimate <= 200", { estimate: 2 }],
    ["plan != 'enterprise' or is_set(company)", { plan: "free", company: null }],
    ["points < 5 and escalated == false", { points: 1, escalated: false }],
    ["plan not in ['enterprise'] or escalated", { plan: "free", escalated: false }],
  ])("finds values that break and values that satisfy %s", (source, base) => {
    const expr = parseExpression(source);
    const broken = force(expr, false, base, FIELDS);
    expect(broken).not.toBeNull();
    expect(evaluate(expr, { ...base, ...broken })).toBe(false);
    const kept = force(expr, true, { ...base, ...broken }, FIELDS);
    expect(kept).not.toBeNull();
    expect(evaluate(expr, { ...base, ...broken, ...kept })).toBe(true);
  });

  it("never proposes a value the field's own validation refuses", () => {
    // Breaking `points <= 10` needs 11, above the field's max: no body breaks the rule alone.
    expect(force(parseExpression("points <= 10"), false, { points: 1 }, FIELDS)).toBeNull();
    // A rule that always holds cannot be broken.
    expect(force(parseExpression("true or points > 1"), false, {}, FIELDS)).toBeNull();
  });
});

describe("sampleValue of an array", () => {
  // The request model checks each item against items_type: text items were refused with 422 for
  // an array of dates (museum-openapi31) and of objects (swagger-petstore-openapi30).
  it.each([
    ["date", /^\d{4}-\d{2}-\d{2}$/],
    ["datetime", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/],
    ["uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/],
    ["email", /^[^@]+@example\.com$/],
  ] as const)("gives %s items of that type", (itemsType, shape) => {
    const items = sampleValue(field("xs", "array", { itemsType })) as string[];
    expect(items).toHaveLength(2);
    for (const item of items) expect(item).toMatch(shape);
    expect(new Set(items).size).toBe(2);
  });

  it("gives objects, booleans and numbers as such, and text otherwise", () => {
    expect(sampleValue(field("xs", "array", { itemsType: "object" }))).toEqual([{ key: "value-0" }, { key: "value-1" }]);
    expect(sampleValue(field("xs", "array", { itemsType: "boolean" }))).toEqual([true, false]);
    expect(sampleValue(field("xs", "array", { itemsType: "integer" }))).toEqual([1, 2]);
    expect(sampleValue(field("xs", "array", { itemsType: "string" }))).toEqual(["alpha", "beta"]);
  });

  it("fills a length the rules ask for with items of the declared type", () => {
    const dates = new Map([["dates", field("dates", "array", { itemsType: "date" })]]);
    const kept = force(parseExpression("len(dates) >= 3"), true, {}, dates) as { dates: string[] };
    expect(kept.dates).toHaveLength(3);
    for (const d of kept.dates) expect(d).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe("fieldAccepts", () => {
  it("refuses null where the create model does: a required field, and an optional one with a default", () => {
    // Found by a random domain (issue 40): a guard case created an e-mail field with a default as
    // null, which the create model (typed `T = default`, not `T | None`) refuses with 422.
    expect(fieldAccepts(fieldIR("contact", "email"), null)).toBe(true);
    expect(fieldAccepts(fieldIR("contact", "email", { required: true }), null)).toBe(false);
    expect(fieldAccepts(fieldIR("contact", "email", { hasDefault: true, default: "someone@example.com" }), null)).toBe(false);
    expect(fieldAccepts(fieldIR("contact", "email", { hasDefault: true, default: null }), null)).toBe(true);
  });
});
