import type { Change } from "./types.js";

export interface CallBudgetLimits {
  /** Model calls per minute, all tickets together. */
  perMinute: number;
  /** Model calls per minute for one fingerprint (one error). */
  perFingerprint: number;
  /** Proposals awaiting a decision beyond which no new one is asked for. */
  maxOpenProposals: number;
}

export const DEFAULT_LIMITS: CallBudgetLimits = { perMinute: 10, perFingerprint: 2, maxOpenProposals: 20 };
const WINDOW_MS = 60_000;

/**
 * What the model may cost (docs/threat-model.md "Cost"): anyone who can reach ingest can file
 * distinct tier 2/3 errors, so calls are counted in a sliding minute, globally and per
 * fingerprint. A ticket over budget is not lost: it waits in the queue (pipeline/process.ts).
 */
export class CallBudget {
  private readonly calls: { at: number; fingerprint: string }[] = [];

  constructor(
    readonly limits: CallBudgetLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** `SVC_HEALER_LLM_CALLS_PER_MINUTE`, `SVC_HEALER_LLM_CALLS_PER_ERROR`, `SVC_HEALER_MAX_OPEN_PROPOSALS`. */
  static limitsFromEnv(env: NodeJS.ProcessEnv): CallBudgetLimits {
    const num = (name: string, fallback: number): number => {
      const n = Number(env[name]);
      return env[name] && Number.isInteger(n) && n > 0 ? n : fallback;
    };
    return {
      perMinute: num("SVC_HEALER_LLM_CALLS_PER_MINUTE", DEFAULT_LIMITS.perMinute),
      perFingerprint: num("SVC_HEALER_LLM_CALLS_PER_ERROR", DEFAULT_LIMITS.perFingerprint),
      maxOpenProposals: num("SVC_HEALER_MAX_OPEN_PROPOSALS", DEFAULT_LIMITS.maxOpenProposals),
    };
  }

  /** Records one call and returns 0 when it is within budget; otherwise the ms until a slot frees up. */
  take(fingerprint: string): number {
    const now = this.now();
    while (this.calls.length > 0 && (this.calls[0] as { at: number }).at <= now - WINDOW_MS) this.calls.shift();
    const mine = this.calls.filter((c) => c.fingerprint === fingerprint);
    const full = [this.calls.length >= this.limits.perMinute ? this.calls : [], mine.length >= this.limits.perFingerprint ? mine : []];
    const waits = full.filter((l) => l.length > 0).map((l) => (l[0] as { at: number }).at + WINDOW_MS - now);
    if (waits.length > 0) return Math.max(1, ...waits);
    this.calls.push({ at: now, fingerprint });
    return 0;
  }

  /** Calls made beyond the one `take` counted (a second attempt). */
  spend(fingerprint: string, extra: number): void {
    for (let i = 0; i < extra; i++) this.calls.push({ at: this.now(), fingerprint });
  }
}

/** Keys whose values are auth users, roles or secrets: a model's proposal never changes them. */
const GUARDED_KEY = /^(password|passwd|secret|secrets|token|tokens|api_key|apikey|users|roles|role|bootstrap|auth|permissions|env_vars)$/i;

/**
 * Why a tier 2/3 proposal is refused, or null. It may change only its target contract (the
 * pipeline gives the proposer no other file), never that contract's kind, name or domain, and
 * nothing about auth users, roles or secrets (docs/threat-model.md: refused rather than
 * held for a second confirmation, the simplest safe choice; such changes are made by hand).
 */
export function guardedChangeReason(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  changes: readonly Change[],
): string | null {
  const meta = (d: Record<string, unknown>): string => {
    const m = (d.metadata ?? {}) as Record<string, unknown>;
    return `${String(d.kind)}/${String(m.domain)}/${String(m.name)}`;
  };
  if (meta(before) !== meta(after)) return `it turns ${meta(before)} into ${meta(after)}`;
  if (String(after.kind).toLowerCase() === "infra") return "it changes an Infra contract";
  for (const c of changes) {
    for (const path of [c.path, c.from ?? "", ...keyPaths(c.value, c.path), ...keyPaths(c.before, c.path)]) {
      const key = path
        .split("/")
        .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"))
        .find((k) => GUARDED_KEY.test(k));
      if (key) return `it touches ${JSON.stringify(key)} (auth users, roles or secrets) at ${path}`;
    }
  }
  return null;
}

function keyPaths(value: unknown, at: string): string[] {
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => [`${at}/${k}`, ...keyPaths(v, `${at}/${k}`)]);
}
