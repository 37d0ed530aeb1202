import { describe, expect, it } from "vitest";
import { ExpressionError, expressionNames, parseExpression } from "../../src/contracts/index.js";

describe("expression language", () => {
  it("parses comparisons, boolean operators, membership, calls and literals", () => {
    expect(parseExpression("priority != 'critical' or len(description) >= 20")).toEqual({
      type: "logical",
      op: "or",
      left: { type: "compare", op: "!=", left: { type: "name", name: "priority" }, right: { type: "literal", value: "critical" } },
      right: {
        type: "compare",
        op: ">=",
        left: { type: "call", fn: "len", args: [{ type: "name", name: "description" }] },
        right: { type: "literal", value: 20 },
      },
    });
    expect(parseExpression("x not in ['a', \"b\"]")).toMatchObject({ type: "compare", op: "not in", right: { type: "list" } });
    expect(parseExpression("not is_set(a) and (b == null or c < -1.5)")).toMatchObject({
      type: "logical",
      op: "and",
      left: { type: "not" },
    });
    expect(parseExpression("done == true")).toMatchObject({ right: { type: "literal", value: true } });
  });

  it("binds 'and' tighter than 'or'", () => {
    expect(parseExpression("a or b and c")).toMatchObject({ op: "or", right: { op: "and" } });
  });

  it("lists the field names an expression reads", () => {
    expect(expressionNames(parseExpression("a == 1 and (b in [c] or len(a) > d)"))).toEqual(["a", "b", "c", "d"]);
  });

  it.each([
    ["", "empty expression", 0],
    ["a ==", "unexpected end of expression", 4],
    ["a = 1", "unexpected character '='", 2],
    ["(a == 1", "expected ')', found end of expression", 7],
    ["eval(a)", "unknown function 'eval' (known: len, is_set)", 0],
    ["len(a, b)", "len() takes exactly one argument", 0],
    ["'open", "unterminated string", 0],
    ["a < b < c", "chained comparisons are not supported; join them with 'and'", 6],
    ["a.b == 1", "unexpected character '.'", 1],
    ["__import__('os')", "unknown function '__import__' (known: len, is_set)", 0],
  ])("refuses %j with a located error", (src, message, offset) => {
    try {
      parseExpression(src);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ExpressionError);
      expect((e as ExpressionError).message).toBe(message);
      expect((e as ExpressionError).offset).toBe(offset);
    }
  });
});
