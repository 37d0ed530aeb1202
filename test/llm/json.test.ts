import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseJsonObject, requestJson, selectProvider } from "../../src/llm/index.js";
import { type FakeLlm, useFakeLlm } from "../support/fake-llm.js";

const Reply = z.object({ contract: z.string(), explanation: z.string() });

const llm = useFakeLlm();
let fake: FakeLlm;
beforeEach(() => {
  fake = llm();
});

function selection() {
  const s = selectProvider(fake.env());
  if (!s.ok) throw new Error(s.reason);
  return s;
}

describe("requestJson against an OpenAI-compatible server", () => {
  it("asks for JSON in the message content (response_format, no tools) and validates the reply", async () => {
    fake.reply({ json: { contract: "kind: Entity\n", explanation: "added a field" } });
    const r = await requestJson({ model: selection(), system: "be brief", prompt: "fix it", schema: Reply });
    expect(r).toMatchObject({ ok: true, value: { contract: "kind: Entity\n", explanation: "added a field" } });
    expect(fake.requests).toHaveLength(1);
    const body = fake.requests[0]?.body;
    expect(body?.response_format).toEqual({ type: "json_object" });
    expect(body?.tools).toBeUndefined();
    expect(body?.model).toBe("gpt-4.1-mini");
    expect(body?.messages?.map((m) => m.role)).toEqual(["system", "user"]);
    expect(fake.userPrompt(0)).toBe("fix it");
  });

  it("accepts an object wrapped in a fence and prose", async () => {
    fake.reply({ content: 'Here you go:\n```json\n{"contract": "x", "explanation": "y"}\n```\nBye.' });
    const r = await requestJson({ model: selection(), system: "", prompt: "p", schema: Reply });
    expect(r).toMatchObject({ ok: true, value: { contract: "x", explanation: "y" } });
  });

  it("garbage is unparsable, with the text kept", async () => {
    fake.reply({ content: "I cannot help with that." });
    const r = await requestJson({ model: selection(), system: "", prompt: "p", schema: Reply });
    expect(r).toMatchObject({ ok: false, kind: "unparsable", text: "I cannot help with that." });
  });

  it("a wrong shape is invalid and names the field", async () => {
    fake.reply({ json: { contract: 42 } });
    const r = await requestJson({ model: selection(), system: "", prompt: "p", schema: Reply });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.kind).toBe("invalid");
      expect(r.message).toMatch(/contract: .*string/);
      expect(r.message).toContain("explanation");
    }
  });

  it("an HTTP error is a provider failure, not an exception, and is not retried", async () => {
    fake.reply({ status: 503, body: { error: { message: "overloaded" } } });
    const r = await requestJson({ model: selection(), system: "", prompt: "p", schema: Reply });
    expect(r).toMatchObject({ ok: false, kind: "provider" });
    if (!r.ok) expect(r.message).toContain("overloaded");
    expect(fake.requests).toHaveLength(1);
  });

  it("a hanging server ends at the timeout", async () => {
    fake.reply({ hang: true });
    const r = await requestJson({ model: selection(), system: "", prompt: "p", schema: Reply, timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false, kind: "timeout" });
    expect(r.ms).toBeLessThan(5000);
  });

  it("the caller's signal aborts a call in flight", async () => {
    fake.reply({ hang: true });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const r = await requestJson({ model: selection(), system: "", prompt: "p", schema: Reply, signal: ac.signal, timeoutMs: 30_000 });
    expect(r).toMatchObject({ ok: false, kind: "aborted" });
  });

  it("nothing listening is a provider failure", async () => {
    const s = selectProvider({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    if (!s.ok) throw new Error("expected a selection");
    const r = await requestJson({ model: s, system: "", prompt: "p", schema: Reply, timeoutMs: 5000 });
    expect(r).toMatchObject({ ok: false, kind: "provider" });
  });
});

describe("parseJsonObject", () => {
  it("refuses arrays and scalars", () => {
    expect(parseJsonObject("[1,2]").ok).toBe(false);
    expect(parseJsonObject("42").ok).toBe(false);
    expect(parseJsonObject('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
  });
});
