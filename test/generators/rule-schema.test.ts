import { describe, expect, it } from "vitest";
import type { FieldIR, ValidationRuleIR } from "../../src/compiler/ir.js";
import { parseExpression } from "../../src/contracts/expression.js";
import { compileRules } from "../../src/generators/fastapi/rule-schema.js";
import { fieldIR } from "../support/field-ir.js";

// Required, and arrays of integers, unless a test says otherwise.
const field = (name: string, type: FieldIR["type"], extra: Partial<FieldIR> = {}): FieldIR =>
  fieldIR(name, type, { required: true, itemsType: type === "array" ? "integer" : null, ...extra });

const rule = (source: string): ValidationRuleIR => ({
  source,
  expr: parseExpression(source),
  onFail: { status: 422, error: "validation_error", message: null },
});

describe("rules compiled into request schemas", () => {
  const fields = [
    field("setting", "array", { constraints: { minLength: 2, maxLength: 7 } }),
    field("size", "integer", { constraints: { min: 0, max: 50 } }),
    field("title", "string", { constraints: { maxLength: 20 } }),
    field("level", "string", { enum: ["low", "high"] }),
  ];
  const required = new Set(fields.map((f) => f.name));
  const keywords = (source: string) => compileRules([rule(source)], fields, required).byField;

  it("never loosens what the field's own type states: a rule's keyword replaces the type's", () => {
    // The schema would say 0 items and the model would refuse fewer than 2 (a fuzzer's ST202).
    expect(keywords("len(setting) >= 0").get("setting")).toEqual({ minItems: 2 });
    expect(keywords("len(setting) <= 100").get("setting")).toEqual({ maxItems: 7 });
    expect(keywords("size <= 100").get("size")).toEqual({ maximum: 50 });
    expect(keywords("len(title) <= 500").get("title")).toEqual({ maxLength: 20 });
    expect(keywords("level in ['low', 'medium']").get("level")).toEqual({ enum: ["low"] });
  });

  it("keeps a rule's keyword that is tighter than the type's", () => {
    expect(keywords("len(setting) >= 3").get("setting")).toEqual({ minItems: 3 });
    expect(keywords("size >= 10 and size <= 20").get("size")).toEqual({ minimum: 10, maximum: 20 });
    expect(keywords("size > 5").get("size")).toEqual({ exclusiveMinimum: 5 });
  });
});
