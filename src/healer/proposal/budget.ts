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
