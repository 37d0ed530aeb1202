import { HealerError } from "../errors.js";
import { type HealerStatus, healerStatus } from "../notify/metrics.js";
import { unacceptedRisk } from "../proposal/risk.js";
import { PROCESS_OWNER } from "../store/store.js";
import { type DiffRecord, OPEN_STATUSES, type Ticket } from "../types.js";
import type { HealerCore } from "./core.js";
import type { HealerProcessor } from "./process.js";

/** Review, the last part: a person's decisions (approve, reject, retry) and the views. */
export class HealerReview {
  constructor(
    private readonly core: HealerCore,
    private readonly processor: HealerProcessor,
  ) {}

  /**
   * `proposed` -> `approved` -> apply -> `applied` or `failed`. A proposal that destroys data or
   * weakens a rule is approved only when `acceptRisk` names each such finding (its id; `true`
   * for all, the CLI's `--accept-risk`): the check is here, so every caller enforces it.
   */
  async approve(idOrPrefix: string, acceptRisk: readonly string[] | true = []): Promise<Ticket> {
    const t = await this.core.store.resolve(idOrPrefix);
    if (t.status !== "proposed")
      throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} is ${t.status}; only a proposed ticket can be approved`);
    const unaccepted = unacceptedRisk(t.proposal?.risk, acceptRisk);
    if (unaccepted) throw new HealerError("risk_not_accepted", `ticket ${t.id.slice(0, 8)}: ${unaccepted}`);
    const approved = await this.core.store.transition(t.id, "proposed", "approved", { claimed_by: PROCESS_OWNER });
    if (!approved) throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} changed state meanwhile; look at it again`);
    return (await this.processor.applyApproved(approved)).ticket;
  }

  /** Rejects a proposal (or dismisses a ticket still waiting in the queue); the reason is kept. */
  async reject(idOrPrefix: string, reason = ""): Promise<Ticket> {
    const t = await this.core.store.resolve(idOrPrefix);
    if (t.status !== "proposed" && t.status !== "queued") {
      throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} is ${t.status}; only a proposed or queued ticket can be rejected`);
    }
    const note = reason.trim() || "rejected without a reason";
    const rejected = await this.core.store.transition(t.id, t.status, "rejected", { resolution_note: note });
    if (!rejected) throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} changed state meanwhile; look at it again`);
    this.core.emit("rejected", rejected, `rejected: ${note}`);
    return rejected;
  }

  /**
   * The owner's retry: puts a failed or rejected ticket back in the queue (without its old
   * proposal) and processes it, whatever changed or did not since its last attempt.
   */
  async retry(idOrPrefix: string): Promise<Ticket> {
    const t = await this.core.store.resolve(idOrPrefix);
    if (t.status !== "failed" && t.status !== "rejected")
      throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} is ${t.status}; only a failed or rejected ticket can be retried`);
    const queued = await this.core.store.transition(t.id, t.status, "queued", { proposal: null, resolution_note: "retried by the owner" });
    if (!queued) throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} changed state meanwhile; look at it again`);
    return this.processor.processTicket(queued.id);
  }

  // ---- views ----------------------------------------------------------------------------------

  status(): Promise<HealerStatus> {
    return healerStatus(this.core.store);
  }

  history(): DiffRecord[] {
    return this.core.diffs.list();
  }

  /** Tickets still open, by status; what `healer status` shows next to the totals. */
  async openCount(): Promise<number> {
    const q = await this.core.store.countByStatus();
    return OPEN_STATUSES.reduce((n, s) => n + q[s], 0);
  }
}
