import { resolve } from "node:path";
import { checkDomain } from "../../compiler/index.js";
import { HealerError } from "../errors.js";
import { type HealerStatus, healerStatus } from "../metrics.js";
import { projectPath } from "../normalise.js";
import { unacceptedRisk } from "../risk.js";
import { PROCESS_OWNER } from "../store.js";
import { type DiffRecord, OPEN_STATUSES, type Ticket } from "../types.js";
import type { FixSummary } from "./core.js";
import { HealerProcessing } from "./process.js";

/**
 * Review, the last stage: a person's decisions (approve, reject, retry), `healer fix` and the views.
 *
 * The Healer pipeline: report -> ticket (classified, fingerprinted, queued) -> claim -> propose ->
 * apply -> notify. The CLI and the HTTP service (a later issue) call these same methods; nothing
 * here prints except through the notifier.
 */
export class Healer extends HealerProcessing {
  /**
   * `proposed` -> `approved` -> apply -> `applied` or `failed`. A proposal that destroys data or
   * weakens a rule is approved only when `acceptRisk` names each such finding (its id; `true`
   * for all, the CLI's `--accept-risk`): the check is here, so every caller enforces it.
   */
  async approve(idOrPrefix: string, acceptRisk: readonly string[] | true = []): Promise<Ticket> {
    const t = await this.store.resolve(idOrPrefix);
    if (t.status !== "proposed")
      throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} is ${t.status}; only a proposed ticket can be approved`);
    const unaccepted = unacceptedRisk(t.proposal?.risk, acceptRisk);
    if (unaccepted) throw new HealerError("risk_not_accepted", `ticket ${t.id.slice(0, 8)}: ${unaccepted}`);
    const approved = await this.store.transition(t.id, "proposed", "approved", { claimed_by: PROCESS_OWNER });
    if (!approved) throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} changed state meanwhile; look at it again`);
    return (await this.applyApproved(approved)).ticket;
  }

  /** Rejects a proposal (or dismisses a ticket still waiting in the queue); the reason is kept. */
  async reject(idOrPrefix: string, reason = ""): Promise<Ticket> {
    const t = await this.store.resolve(idOrPrefix);
    if (t.status !== "proposed" && t.status !== "queued") {
      throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} is ${t.status}; only a proposed or queued ticket can be rejected`);
    }
    const note = reason.trim() || "rejected without a reason";
    const rejected = await this.store.transition(t.id, t.status, "rejected", { resolution_note: note });
    if (!rejected) throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} changed state meanwhile; look at it again`);
    this.emit("rejected", rejected, `rejected: ${note}`);
    return rejected;
  }

  /** Puts a failed ticket back in the queue (without its old proposal) and processes it. */
  async retry(idOrPrefix: string): Promise<Ticket> {
    const t = await this.store.resolve(idOrPrefix);
    if (t.status !== "failed")
      throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} is ${t.status}; only a failed ticket can be retried`);
    const queued = await this.store.transition(t.id, "failed", "queued", { proposal: null, resolution_note: "retried" });
    if (!queued) throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} changed state meanwhile; look at it again`);
    return this.processTicket(queued.id);
  }

  // ---- the whole loop -------------------------------------------------------------------------

  /** `healer fix`: scan, file tickets, process the queue, and count what happened. */
  async fix(path: string = this.scanDir): Promise<FixSummary> {
    const { check, tickets } = await this.scan(path);
    const run = await this.processQueue();
    const ids = [...new Set(tickets.map((t) => t.ticket.id))];
    const now = (await Promise.all(ids.map((id) => this.store.get(id)))).filter((t): t is Ticket => t !== null);
    const after = run.applied > 0 ? checkDomain(resolve(path), { cache: this.parseCache }) : check;
    // Fixes applied while other errors remained deferred their regeneration; once the domain is
    // valid again (the last fix, or a hand fix before this run), the code catches up here.
    let regenerated = run.regenerated;
    const deferred = this.history().some((r) => r.regeneration === "deferred");
    if (after.ir && regenerated === 0 && (run.applied > 0 || deferred)) {
      regenerated = this.regenerate(after.ir, this.layout.runtimeDir).files;
      this.diffs.markRegenerated();
    }
    return {
      scanned: projectPath(this.layout.root, resolve(path)),
      contracts: check.contracts.length,
      errors: check.errors,
      warnings: check.warnings,
      tickets: ids.length,
      newTickets: tickets.filter((t) => t.created).length,
      applied: now.filter((t) => t.status === "applied").length,
      awaiting: now.filter((t) => t.status === "proposed" || t.status === "approved").length,
      failed: now.filter((t) => t.status === "failed").length,
      remainingErrors: after.errors,
      regenerated,
      ticketIds: ids,
    };
  }

  // ---- views ----------------------------------------------------------------------------------

  status(): Promise<HealerStatus> {
    return healerStatus(this.store);
  }

  history(): DiffRecord[] {
    return this.diffs.list();
  }

  /** Tickets still open, by status; what `healer status` shows next to the totals. */
  async openCount(): Promise<number> {
    const q = await this.store.countByStatus();
    return OPEN_STATUSES.reduce((n, s) => n + q[s], 0);
  }
}
