import { generateText, type LanguageModel, NoObjectGeneratedError, Output } from "ai";
import type { z } from "zod";
import { createLanguageModel } from "./model.js";
import { DEFAULT_TIMEOUT_SECONDS, type ProviderSelection } from "./providers.js";

/** One request for a JSON object. */
export interface JsonRequest<T> {
  /** A provider selection (built into a model here) or a ready model. */
  model: ProviderSelection | LanguageModel;
  system: string;
  prompt: string;
  /** The shape the reply must have; the parsed object is validated against it. */
  schema: z.ZodType<T>;
  /** Upper bound of the whole call; default the selection's timeout, else 60 s. */
  timeoutMs?: number;
  /** Cancels the call (a server shutting down, say). */
  signal?: AbortSignal;
  temperature?: number;
}

/** Why a call gave no usable object. */
export type JsonFailureKind = "timeout" | "aborted" | "provider" | "unparsable" | "invalid";

export type JsonReply<T> =
  | { ok: true; value: T; text: string; ms: number }
  | { ok: false; kind: JsonFailureKind; message: string; text?: string; ms: number };

/**
 * Asks the model for one JSON object in the message content (response format JSON, never tool
 * calls, so local servers that lack tool support work), then parses and validates it. Never
 * throws for what a model or a network can do wrong: a hang ends at the timeout, a refusal or
 * garbage comes back as a failure with the text received, so the caller can retry or give up.
 * The SDK's own retries are off: the caller decides whether a second attempt is worth it.
 */
export async function requestJson<T>(req: JsonRequest<T>): Promise<JsonReply<T>> {
  const started = Date.now();
  const ms = (): number => Date.now() - started;
  const timeoutMs = req.timeoutMs ?? (isSelection(req.model) ? req.model.timeoutMs : DEFAULT_TIMEOUT_SECONDS * 1000);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  let text: string;
  try {
    const model = isSelection(req.model) ? await createLanguageModel(req.model) : req.model;
    const result = await generateText({
      model,
      system: req.system,
      prompt: req.prompt,
      output: Output.json(),
      abortSignal: signal,
      maxRetries: 0,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    });
    text = result.text;
  } catch (e) {
    if (NoObjectGeneratedError.isInstance(e) && typeof e.text === "string") {
      // The SDK's strict parse failed; the lenient one below still gets its chance.
      text = e.text;
    } else if (timeout.aborted) {
      return { ok: false, kind: "timeout", message: `no reply within ${Math.round(timeoutMs / 1000)} s`, ms: ms() };
    } else if (req.signal?.aborted) {
      return { ok: false, kind: "aborted", message: "the request was cancelled", ms: ms() };
    } else {
      return { ok: false, kind: "provider", message: providerMessage(e), ms: ms() };
    }
  }
  const parsed = parseJsonObject(text);
  if (!parsed.ok) return { ok: false, kind: "unparsable", message: parsed.message, text, ms: ms() };
  const checked = req.schema.safeParse(parsed.value);
  if (!checked.success) {
    const issues = checked.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
    return { ok: false, kind: "invalid", message: `the reply does not have the expected shape: ${issues.join("; ")}`, text, ms: ms() };
  }
  return { ok: true, value: checked.data, text, ms: ms() };
}

/**
 * The JSON object in a model's text: the whole text, or the part inside a ```json fence, or from
 * the first `{` to the last `}` (models like to add a sentence around it).
 */
export function parseJsonObject(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  const candidates = [text.trim()];
  const fence = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text);
  if (fence?.[1]) candidates.push(fence[1].trim());
  const first = text.indexOf("{");
  const last = text.lastIndexOf("}");
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  for (const c of candidates) {
    try {
      const value: unknown = JSON.parse(c);
      if (value !== null && typeof value === "object" && !Array.isArray(value))
        return { ok: true, value: value as Record<string, unknown> };
    } catch {
      // try the next candidate
    }
  }
  const shown = text.length > 120 ? `${text.slice(0, 120)}...` : text;
  return { ok: false, message: `the reply is not a JSON object: ${JSON.stringify(shown)}` };
}

function isSelection(m: ProviderSelection | LanguageModel): m is ProviderSelection {
  return typeof m === "object" && m !== null && "ok" in m && (m as ProviderSelection).ok === true && "provider" in m;
}

function providerMessage(e: unknown): string {
  const err = e as { message?: string; statusCode?: number; url?: string };
  const status = typeof err.statusCode === "number" ? `HTTP ${err.statusCode}: ` : "";
  return `the provider failed: ${status}${err.message ?? String(e)}`;
}
