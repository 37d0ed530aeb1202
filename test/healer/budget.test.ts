import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/healer/intake/redact.js";
import { CallBudget } from "../../src/healer/proposal/budget.js";
import { jsonDepth } from "../../src/healer/server/app.js";

describe("the model-call budget", () => {
  it("counts calls in a sliding minute, globally and per fingerprint, and says when a slot frees up", () => {
    let now = 1_000_000;
    const b = new CallBudget({ perMinute: 3, perFingerprint: 2, maxOpenProposals: 20 }, () => now);
    expect(b.take("a")).toBe(0);
    now += 1000;
    expect(b.take("a")).toBe(0);
    expect(b.take("a")).toBe(59_000); // a's first call leaves the window in 59 s
    expect(b.take("b")).toBe(0);
    expect(b.take("c")).toBe(59_000); // three calls in the minute: the oldest leaves in 59 s
    now += 59_000;
    expect(b.take("c")).toBe(0);
    b.spend("c", 1);
    expect(b.take("c")).toBeGreaterThan(0);
  });

  it("reads its limits from the environment, ignoring nonsense", () => {
    expect(CallBudget.limitsFromEnv({ SVC_HEALER_LLM_CALLS_PER_MINUTE: "5", SVC_HEALER_LLM_CALLS_PER_ERROR: "x" })).toEqual({
      perMinute: 5,
      perFingerprint: 2,
      maxOpenProposals: 20,
    });
  });
});

describe("secret redaction", () => {
  it("hides keyed values, bearer tokens and the values of secret settings", () => {
    const env = { SVC_HEALER_TOKEN: "tok-123456789" };
    const out = redactSecrets('password=hunter2 "api_key": "abc" Authorization: Bearer eyJ.x.y seen tok-123456789 here', env);
    expect(out).not.toMatch(/hunter2|abc"|eyJ|tok-123456789/);
    expect(out).toContain("password=<redacted>");
    expect(out).toContain("here");
  });
});

describe("JSON depth, counted before parsing", () => {
  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(jsonDepth('{"a": [1, {"b": "[[[{{{\\"]]]"}]}')).toBe(3);
    expect(jsonDepth(`${"[".repeat(50)}${"]".repeat(50)}`)).toBe(50);
  });
});
