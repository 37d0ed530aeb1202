import { describe, expect, it } from "vitest";
import { CONFIGURE_HINT, PROVIDERS, selectProvider } from "../../src/llm/index.js";

const KEYS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY"] as const;
const LOCAL = ["OLLAMA_BASE_URL", "LMSTUDIO_BASE_URL"] as const;
const ORDER = [...KEYS, ...LOCAL];
const ID_OF: Record<string, string> = {
  ANTHROPIC_API_KEY: "anthropic",
  OPENAI_API_KEY: "openai",
  GEMINI_API_KEY: "google",
  GROQ_API_KEY: "groq",
  OPENROUTER_API_KEY: "openrouter",
  OLLAMA_BASE_URL: "ollama",
  LMSTUDIO_BASE_URL: "lmstudio",
};

/** Every subset of the seven variables: 128 environments. */
function subsets(): string[][] {
  const out: string[][] = [];
  for (let mask = 0; mask < 1 << ORDER.length; mask++) out.push(ORDER.filter((_, i) => mask & (1 << i)));
  return out;
}

function envOf(vars: readonly string[]): Record<string, string> {
  return Object.fromEntries(vars.map((v) => [v, v.endsWith("_URL") ? "http://127.0.0.1:11434" : `key-${v}`]));
}

describe("provider selection", () => {
  it("picks the first set variable in the documented order, for every combination", () => {
    for (const vars of subsets()) {
      const choice = selectProvider(envOf(vars));
      const first = ORDER.find((v) => vars.includes(v));
      if (!first) {
        expect(choice).toEqual({ ok: false, reason: "no LLM provider is configured", hint: CONFIGURE_HINT });
        continue;
      }
      if (!choice.ok) throw new Error(`expected a provider for ${vars.join(",")}`);
      expect(choice.provider, vars.join(",")).toBe(ID_OF[first]);
      expect(choice.model).toBe(PROVIDERS.find((p) => p.id === ID_OF[first])?.defaultModel);
      expect(choice.reason).toContain(first);
    }
  });

  it("SVC_AI_MODEL wins over the order, for every combination that has its key", () => {
    for (const vars of subsets()) {
      const env = { ...envOf(vars), SVC_AI_MODEL: "groq:llama-3.1-8b-instant" };
      const choice = selectProvider(env);
      if (vars.includes("GROQ_API_KEY")) {
        expect(choice).toMatchObject({ ok: true, provider: "groq", model: "llama-3.1-8b-instant", apiKey: "key-GROQ_API_KEY" });
        if (choice.ok) expect(choice.reason).toBe("SVC_AI_MODEL=groq:llama-3.1-8b-instant");
      } else {
        expect(choice).toMatchObject({ ok: false, reason: expect.stringContaining("GROQ_API_KEY is not set") });
      }
    }
  });

  it("SVC_AI_MODEL without a model uses the provider's default; gemini is an alias of google", () => {
    expect(selectProvider({ SVC_AI_MODEL: "gemini", GEMINI_API_KEY: "k" })).toMatchObject({
      provider: "google",
      model: "gemini-2.5-flash",
    });
    expect(selectProvider({ SVC_AI_MODEL: "ollama:qwen2.5-coder", OLLAMA_BASE_URL: "http://localhost:11434" })).toMatchObject({
      provider: "ollama",
      model: "qwen2.5-coder",
      baseURL: "http://localhost:11434/v1",
    });
  });

  it("an unknown provider in SVC_AI_MODEL is refused with the list of known ones", () => {
    const c = selectProvider({ SVC_AI_MODEL: "mistral:large", OPENAI_API_KEY: "k" });
    expect(c.ok).toBe(false);
    if (!c.ok) {
      expect(c.reason).toContain('unknown provider "mistral"');
      expect(c.hint).toContain("anthropic, openai, google, groq, openrouter, ollama, lmstudio");
    }
  });

  it("local servers need no key and get /v1 appended once", () => {
    expect(selectProvider({ LMSTUDIO_BASE_URL: "http://127.0.0.1:1234/v1/" })).toMatchObject({
      provider: "lmstudio",
      api: "openai-compatible",
      baseURL: "http://127.0.0.1:1234/v1",
    });
    expect(selectProvider({ LMSTUDIO_BASE_URL: "http://127.0.0.1:1234" })).toMatchObject({ baseURL: "http://127.0.0.1:1234/v1" });
  });

  it("OPENAI_BASE_URL sends OpenAI's slot to a chat-completions server, key optional", () => {
    expect(selectProvider({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" })).toMatchObject({
      provider: "openai",
      api: "openai-compatible",
      baseURL: "http://127.0.0.1:9/v1",
    });
    // Anthropic still comes first.
    expect(selectProvider({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1", ANTHROPIC_API_KEY: "k" })).toMatchObject({ provider: "anthropic" });
  });

  it("openrouter talks to its OpenAI-compatible address", () => {
    expect(selectProvider({ OPENROUTER_API_KEY: "k" })).toMatchObject({
      api: "openai-compatible",
      baseURL: "https://openrouter.ai/api/v1",
      apiKey: "k",
    });
  });

  it("empty values count as unset", () => {
    expect(selectProvider({ ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "  ", GROQ_API_KEY: "g" })).toMatchObject({ provider: "groq" });
  });

  it("SVC_AI_TIMEOUT sets the timeout in seconds; nonsense is refused", () => {
    expect(selectProvider({ GROQ_API_KEY: "g" })).toMatchObject({ timeoutMs: 60_000 });
    expect(selectProvider({ GROQ_API_KEY: "g", SVC_AI_TIMEOUT: "2.5" })).toMatchObject({ timeoutMs: 2500 });
    expect(selectProvider({ GROQ_API_KEY: "g", SVC_AI_TIMEOUT: "soon" })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("soon"),
    });
  });
});
