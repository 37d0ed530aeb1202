/**
 * Failures a caller can act on (unknown id, wrong state, bad input). The CLI turns them into
 * `UserError` (exit 1); the HTTP service maps `not_found` to 404 and the others to 400.
 */
export type HealerErrorCode = "not_found" | "ambiguous" | "invalid_id" | "invalid_state" | "invalid_report" | "risk_not_accepted";

export class HealerError extends Error {
  constructor(
    readonly code: HealerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "HealerError";
  }
}
