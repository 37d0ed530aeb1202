import { resolve } from "node:path";
import type { CheckResult } from "../../compiler/index.js";
import { checkDomain } from "../../compiler/index.js";
import type { ParseCache } from "../../contracts/index.js";
import type { ProjectLayout } from "../apply/apply.js";
import type { DiffStore } from "../apply/diff-store.js";
import type { HealerError } from "../errors.js";
import type { HealerStatus } from "../notify/metrics.js";
import type { Notifier } from "../notify/notify.js";
import { projectPath } from "../proposal/normalise.js";
import type { Proposer } from "../proposal/proposer.js";
import type { IngestResult, TicketStore } from "../store/store.js";
import type { DiffRecord, ErrorReport, Ticket } from "../types.js";
import { type FixSummary, HealerCore, type HealerOptions, type RunSummary } from "./core.js";
import { HealerIntake } from "./intake.js";
import { HealerProcessor } from "./process.js";
import { HealerReview } from "./review.js";

/**
 * The Healer pipeline: report -> ticket (classified, fingerprinted, queued) -> claim -> propose ->
 * apply -> notify. Composed of a core (store, layout, clock, notifier, the domain's view) and three
 * parts that each receive it: intake (reports and scans to tickets), processor (classify, propose,
 * apply) and review (a person's decisions and the views). The CLI and the HTTP service call the
 * methods below; nothing here prints except through the notifier.
 */
export class Healer {
  private readonly core: HealerCore;
  private readonly intake: HealerIntake;
  private readonly processor: HealerProcessor;
  private readonly review: HealerReview;

  constructor(options: HealerOptions) {
    this.core = new HealerCore(options);
    this.intake = new HealerIntake(this.core);
    this.processor = new HealerProcessor(this.core);
    this.review = new HealerReview(this.core, this.processor);
  }

  // ---- the core's state -----------------------------------------------------------------------

  get layout(): ProjectLayout {
    return this.core.layout;
  }
  get scanDir(): string {
    return this.core.scanDir;
  }
  get store(): TicketStore {
    return this.core.store;
  }
  get notifier(): Notifier {
    return this.core.notifier;
  }
  get diffs(): DiffStore {
    return this.core.diffs;
  }
  get proposer(): Proposer | null {
    return this.core.proposer;
  }
  /** Why there is no proposer, and what to set (shown in the failure note). */
  get noProposerReason(): string {
    return this.core.noProposerReason;
  }
  get env(): NodeJS.ProcessEnv {
    return this.core.env;
  }
  get parseCache(): ParseCache | undefined {
    return this.core.parseCache;
  }
  /** Where people reach the service (the view links of notifications); `healer serve` sets it once listening. */
  get publicUrl(): string | null {
    return this.core.publicUrl;
  }
  set publicUrl(url: string | null) {
    this.core.publicUrl = url;
  }

  /** See `HealerCore.attemptKeys`. */
  attemptKeys(maxAgeMs?: number): { attempt_model: string; attempt_contracts: string } {
    return this.core.attemptKeys(maxAgeMs);
  }

  /**
   * Ends LLM calls in flight; their tickets go back to the queue (not to `failed`), so the next
   * run, or the service's next start, asks again.
   */
  cancelPending(): void {
    this.core.stopping.abort();
    this.processor.cancelWake();
  }

  /** Waits for webhook deliveries in flight (bounded by their timeout) and closes the store. */
  close(): Promise<void> {
    return this.core.close();
  }

  /** Requeues tickets of processes that died mid-way (see `TicketStore.recoverStale`). */
  recover(): Promise<void> {
    return this.core.recover();
  }

  // ---- intake ---------------------------------------------------------------------------------

  report(report: ErrorReport): Promise<IngestResult> {
    return this.intake.report(report);
  }

  reportMany(reports: readonly ErrorReport[]): Promise<IngestResult[]> {
    return this.intake.reportMany(reports);
  }

  reportBatch(reports: readonly ErrorReport[]): Promise<(IngestResult | { error: HealerError })[]> {
    return this.intake.reportBatch(reports);
  }

  scan(path?: string): Promise<{ check: CheckResult; tickets: IngestResult[] }> {
    return this.intake.scan(path);
  }

  // ---- processing -----------------------------------------------------------------------------

  processQueue(): Promise<RunSummary> {
    return this.processor.processQueue();
  }

  processTicket(idOrPrefix: string): Promise<Ticket> {
    return this.processor.processTicket(idOrPrefix);
  }

  waitingForBudget(): Promise<number> {
    return this.processor.waitingForBudget();
  }

  // ---- review ---------------------------------------------------------------------------------

  approve(idOrPrefix: string, acceptRisk: readonly string[] | true = []): Promise<Ticket> {
    return this.review.approve(idOrPrefix, acceptRisk);
  }

  reject(idOrPrefix: string, reason = ""): Promise<Ticket> {
    return this.review.reject(idOrPrefix, reason);
  }

  retry(idOrPrefix: string): Promise<Ticket> {
    return this.review.retry(idOrPrefix);
  }

  status(): Promise<HealerStatus> {
    return this.review.status();
  }

  history(): DiffRecord[] {
    return this.review.history();
  }

  openCount(): Promise<number> {
    return this.review.openCount();
  }

  // ---- the whole loop -------------------------------------------------------------------------

  /** `healer fix`: scan, file tickets, process the queue, and count what happened. */
  async fix(path: string = this.core.scanDir): Promise<FixSummary> {
    const { check, tickets } = await this.intake.scan(path);
    const run = await this.processor.processQueue();
    const ids = [...new Set(tickets.map((t) => t.ticket.id))];
    const now = (await Promise.all(ids.map((id) => this.core.store.get(id)))).filter((t): t is Ticket => t !== null);
    const after = run.applied > 0 ? checkDomain(resolve(path), { cache: this.core.parseCache }) : check;
    // Fixes applied while other errors remained deferred their regeneration; once the domain is
    // valid again (the last fix, or a hand fix before this run), the code catches up here.
    let regenerated = run.regenerated;
    const deferred = this.history().some((r) => r.regeneration === "deferred");
    if (after.ir && regenerated === 0 && (run.applied > 0 || deferred)) {
      regenerated = this.core.regenerate(after.ir, this.core.layout.runtimeDir).files;
      this.core.diffs.markRegenerated();
    }
    return {
      scanned: projectPath(this.core.layout.root, resolve(path)),
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
}
