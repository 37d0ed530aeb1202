/**
 * Which LLM provider Charter talks to, decided from the environment alone (the order is below).
 * Pure: the same variables always give the same choice, and the choice says why, so
 * `charter doctor` can print it and a user can change it.
 */

export const PROVIDER_IDS = ["anthropic", "openai", "google", "groq", "openrouter", "ollama", "lmstudio"] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** How a provider is reached: its own SDK package, or OpenAI-compatible chat completions. */
export type ProviderApi = "anthropic" | "openai" | "google" | "groq" | "openai-compatible";

export interface ProviderInfo {
  id: ProviderId;
  api: ProviderApi;
  /** The variable that enables it: an API key for hosted providers, a base URL for local servers. */
  envVar: string;
  /** The model used unless `SVC_AI_MODEL` names another. */
  defaultModel: string;
  /** Base URL when the provider speaks OpenAI-compatible chat completions at a fixed address. */
  defaultBaseURL?: string;
  /** Local servers need no key. */
  local: boolean;
}

/**
 * Selection order: hosted providers first (Anthropic, OpenAI, Gemini, Groq, then
 * OpenRouter as the fifth), then the local servers. `OPENAI_BASE_URL` points OpenAI's slot at any
 * server speaking chat completions (a gateway, or the fake server of the tests on 127.0.0.1).
 */
export const PROVIDERS: readonly ProviderInfo[] = [
  { id: "anthropic", api: "anthropic", envVar: "ANTHROPIC_API_KEY", defaultModel: "claude-sonnet-4-5", local: false },
  { id: "openai", api: "openai", envVar: "OPENAI_API_KEY", defaultModel: "gpt-4.1-mini", local: false },
  { id: "google", api: "google", envVar: "GEMINI_API_KEY", defaultModel: "gemini-2.5-flash", local: false },
  { id: "groq", api: "groq", envVar: "GROQ_API_KEY", defaultModel: "llama-3.3-70b-versatile", local: false },
  {
    id: "openrouter",
    api: "openai-compatible",
    envVar: "OPENROUTER_API_KEY",
    defaultModel: "openai/gpt-4.1-mini",
    defaultBaseURL: "https://openrouter.ai/api/v1",
    local: false,
  },
  { id: "ollama", api: "openai-compatible", envVar: "OLLAMA_BASE_URL", defaultModel: "llama3.1", local: true },
  { id: "lmstudio", api: "openai-compatible", envVar: "LMSTUDIO_BASE_URL", defaultModel: "qwen2.5-7b-instruct", local: true },
];

/** Aliases accepted as the provider part of `SVC_AI_MODEL`. */
const ALIASES: Record<string, ProviderId> = { gemini: "google", "lm-studio": "lmstudio" };

/** Default request timeout of one LLM call (seconds); `SVC_AI_TIMEOUT` overrides it. */
export const DEFAULT_TIMEOUT_SECONDS = 60;

/** A provider that can be used: everything needed to build the model. */
export interface ProviderSelection {
  ok: true;
  provider: ProviderId;
  api: ProviderApi;
  model: string;
  /** Where chat completions are sent (OpenAI-compatible providers, and OpenAI with `OPENAI_BASE_URL`). */
  baseURL?: string;
  apiKey?: string;
  /** Why this one, in words: `SVC_AI_MODEL=...` or `ANTHROPIC_API_KEY is set`. */
  reason: string;
  timeoutMs: number;
}

/** No usable provider: `hint` tells the user what to set. */
export interface NoProvider {
  ok: false;
  reason: string;
  hint: string;
}

export type ProviderChoice = ProviderSelection | NoProvider;

type Env = Readonly<Record<string, string | undefined>>;

/** The hint every "no provider" message carries. */
export const CONFIGURE_HINT =
  "set one of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, OPENROUTER_API_KEY, " +
  "or OLLAMA_BASE_URL / LMSTUDIO_BASE_URL for a local server (optionally SVC_AI_MODEL=provider:model); run `charter doctor` to check";

/**
 * Picks the provider: `SVC_AI_MODEL` (`provider:model`) first, then the first provider whose
 * variable is set, in `PROVIDERS` order. Empty values count as unset.
 */
export function selectProvider(env: Env = process.env): ProviderChoice {
  const get = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const timeout = timeoutOf(get("SVC_AI_TIMEOUT"));
  if (typeof timeout === "string") return { ok: false, reason: timeout, hint: "SVC_AI_TIMEOUT is a number of seconds, e.g. 60" };
  const forced = get("SVC_AI_MODEL");
  if (forced) {
    const i = forced.indexOf(":");
    const name = (i < 0 ? forced : forced.slice(0, i)).toLowerCase();
    const model = i < 0 ? "" : forced.slice(i + 1).trim();
    const id = (PROVIDER_IDS as readonly string[]).includes(name) ? (name as ProviderId) : ALIASES[name];
    if (!id) {
      return {
        ok: false,
        reason: `SVC_AI_MODEL=${forced} names an unknown provider "${name}"`,
        hint: `use provider:model with provider one of ${PROVIDER_IDS.join(", ")}`,
      };
    }
    const info = providerInfo(id);
    const built = build(info, model || info.defaultModel, get, timeout);
    if (!built) {
      return {
        ok: false,
        reason: `SVC_AI_MODEL=${forced} selects ${id}, but ${info.envVar} is not set`,
        hint: `set ${info.envVar}, or choose another provider in SVC_AI_MODEL`,
      };
    }
    return { ...built, reason: `SVC_AI_MODEL=${forced}` };
  }
  for (const info of PROVIDERS) {
    const built = build(info, info.defaultModel, get, timeout);
    if (built) return built;
  }
  return { ok: false, reason: "no LLM provider is configured", hint: CONFIGURE_HINT };
}

export function providerInfo(id: ProviderId): ProviderInfo {
  return PROVIDERS.find((p) => p.id === id) as ProviderInfo;
}

function build(info: ProviderInfo, model: string, get: (n: string) => string | undefined, timeoutMs: number): ProviderSelection | null {
  const value = get(info.envVar);
  const base = { ok: true as const, provider: info.id, api: info.api, model, timeoutMs };
  if (info.id === "openai") {
    // OPENAI_BASE_URL points OpenAI's slot at any server speaking chat completions (a proxy, a
    // gateway, the fake server of the tests); the key is optional there.
    const url = get("OPENAI_BASE_URL");
    if (url) {
      return {
        ...base,
        api: "openai-compatible",
        baseURL: url.replace(/\/+$/, ""),
        ...(value ? { apiKey: value } : {}),
        reason: `OPENAI_BASE_URL is set (${url})`,
      };
    }
  }
  if (!value) return null;
  if (info.local) return { ...base, baseURL: localBaseURL(value), reason: `${info.envVar} is set (${value})` };
  return {
    ...base,
    apiKey: value,
    ...(info.defaultBaseURL ? { baseURL: info.defaultBaseURL } : {}),
    reason: `${info.envVar} is set`,
  };
}

/** Ollama and LM Studio serve the OpenAI-compatible API under `/v1`; users often give the bare address. */
function localBaseURL(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return /\/v\d+$/.test(trimmed) ? trimmed : `${trimmed}/v1`;
}

function timeoutOf(raw: string | undefined): number | string {
  if (raw === undefined) return DEFAULT_TIMEOUT_SECONDS * 1000;
  const s = Number(raw);
  if (!Number.isFinite(s) || s <= 0) return `SVC_AI_TIMEOUT=${raw} is not a positive number of seconds`;
  return Math.round(s * 1000);
}

/** `anthropic/claude-sonnet-4-5`: how logs and notes name the selected model. */
export function describeSelection(s: ProviderSelection): string {
  return `${s.provider}/${s.model}`;
}
