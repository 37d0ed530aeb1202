import { resolve } from "node:path";
import type { CheckResult } from "../../compiler/index.js";
import { checkDomain } from "../../compiler/index.js";
import type { Finding, LoadedContract } from "../../contracts/index.js";
import { parseContractSource, validateContractSchema } from "../../contracts/index.js";
import { type ApplyResult, applyProposal } from "../apply/apply.js";
import { isoWithOffset } from "../clock.js";
import { HealerError } from "../errors.js";
import { classifyError, notFixableDiagnostic } from "../intake/classify.js";
import { mergeConsequences, planConsequences, planProposal } from "../proposal/consequences.js";
import { guardedChangeReason } from "../proposal/guard.js";
import { diffJson } from "../proposal/json-patch.js";
import { normaliseContract, projectPath } from "../proposal/normalise.js";
import type { Proposer, ProposerInput } from "../proposal/proposer.js";
import { editsRisk, reviewContractRisk } from "../proposal/risk.js";
import { candidateProblems, verifyCandidate } from "../proposal/verify.js";
import type { Proposal, Ticket, TicketStatus } from "../types.js";
import { findingOf, fqnOfLoaded, type HealerCore, type Outcome, type RunSummary } from "./core.js";

/**
 * Processing: claim a ticket, classify it again, then fix it at once (tier 1) or ask the proposer
 * (tiers 2 and 3, within the model-call budget); apply, regenerate and notify.
 */
export class HealerProcessor {
  /** A timer that resumes the queue once the budget frees up. */
  private wakeTimer: NodeJS.Timeout | null = null;

  constructor(private readonly core: HealerCore) {}

  /**
   * Works through the queue until it is empty: first finishes fixes an interrupted run left
   * approved, then claims queued tickets one at a time (priority, then age).
   */
  async processQueue(): Promise<RunSummary> {
    const summary: RunSummary = { processed: 0, applied: 0, failed: 0, proposed: 0, regenerated: 0 };
    await this.core.recover();
    for (let t = await this.core.store.claimApproved(); t; t = await this.core.store.claimApproved()) {
      this.count(summary, await this.applyApproved(t));
    }
    for (let t = await this.core.store.claimNext(); t; t = await this.core.store.claimNext()) {
      const out = await this.analyse(t);
      // Out of model budget: the ticket went back to the queue, and the queue resumes when it frees up.
      if (out.deferred) break;
      this.count(summary, out);
    }
    return summary;
  }

  /**
   * Processes one queued ticket now (the HTTP ingest does this synchronously). A ticket another
   * caller is working on is returned as it stands.
   */
  async processTicket(idOrPrefix: string): Promise<Ticket> {
    const t = await this.core.store.resolve(idOrPrefix);
    const claimed = await this.core.store.claim(t.id);
    if (!claimed) return (await this.core.store.get(t.id)) as Ticket;
    const out = await this.analyse(claimed);
    return out.ticket;
  }

  private count(s: RunSummary, r: Outcome): void {
    s.processed++;
    if (r.ticket.status === "applied") s.applied++;
    else if (r.ticket.status === "failed") s.failed++;
    else if (r.ticket.status === "proposed") s.proposed++;
    if (r.regenerated !== undefined) s.regenerated = r.regenerated;
  }

  /** A claimed (`analyzing`) ticket: classify, then route by fixable-by and tier. */
  private async analyse(claimed: Ticket): Promise<Outcome> {
    let t = claimed;
    try {
      // What this attempt runs with, so a repeat of its error asks again only once something changed.
      t = (await this.core.store.update(t.id, "analyzing", this.core.attemptKeys(0))) ?? t;
      const status = typeof t.context.status_code === "number" ? t.context.status_code : undefined;
      const c = classifyError({
        source: t.source,
        message: t.raw_error,
        statusCode: status,
        defines: this.core.defines,
        ...findingOf(t.context),
      });
      if (c.errorType !== t.error_type || c.tier !== t.tier || c.priority !== t.priority || c.fixableBy !== t.fixable_by) {
        t =
          (await this.core.store.update(t.id, "analyzing", {
            error_type: c.errorType,
            tier: c.tier,
            priority: c.priority,
            fixable_by: c.fixableBy,
          })) ?? t;
      }
      if (c.fixableBy !== "contract") return await this.fail(t, "analyzing", notFixableDiagnostic(c));
      if (t.tier === 1) return await this.fixDeterministic(t);
      if (!this.core.proposer) return await this.fail(t, "analyzing", this.core.noProposerReason);
      return await this.propose(t, this.core.proposer);
    } catch (e) {
      if (e instanceof HealerError) throw e;
      return this.fail(t, "analyzing", `internal error while processing: ${(e as Error).message}`);
    }
  }

  /** Tier 1: normalise the contract and apply the result at once (tier 1 needs no approval). */
  private async fixDeterministic(t: Ticket): Promise<Outcome> {
    // A proposal recorded by an interrupted run is finished, not recomputed: its files may already
    // be half written, and apply.ts knows how to complete exactly that proposal.
    if (t.proposal) return this.applyAndSettle(t, t.proposal, "analyzing");
    const scanRoot = this.core.scanRootOf(t);
    const check = checkDomain(scanRoot, { cache: this.core.parseCache });
    const target = this.core.contractOf(t, check);
    if (!target)
      return this.fail(
        t,
        "analyzing",
        `contract file of ${t.contract_fqn ?? "the ticket"} not found under ${projectPath(this.core.layout.root, scanRoot)}`,
      );
    if (t.source === "validation" || t.source === "compilation") {
      const present = check.findings.some((f) => f.severity === "error" && resolve(f.file) === target.absPath && f.message === t.raw_error);
      if (!present) {
        const done = await this.core.store.transition(t.id, "analyzing", "applied", {
          resolution_note: "already resolved by an earlier fix; nothing to change",
        });
        if (done)
          this.core.emit("applied", done, `${done.contract_fqn ?? "contract"}: already resolved by an earlier fix; nothing to change`);
        return { ticket: done ?? t };
      }
    }
    const result = normaliseContract(target.absPath, check.loaded, check.findings, this.core.layout.root);
    const main = result.edits.find((e) => resolve(this.core.layout.root, e.file) === target.absPath);
    if (!main) {
      const why = result.unresolved.length ? result.unresolved.join("; ") : "nothing to change";
      return this.fail(t, "analyzing", `no deterministic fix: ${why}`);
    }
    const proposal: Proposal = {
      contract_fqn: t.contract_fqn,
      file: main.file,
      before: main.before,
      after: main.after,
      changes: main.changes,
      related: result.edits.filter((e) => e !== main),
      explanation: `Normalised ${t.contract_fqn ?? main.file}: ${result.summary.join("; ")}`,
      confidence: 1,
      method: "deterministic",
      created_at: isoWithOffset(this.core.clock()),
      risk: editsRisk([main, ...result.edits.filter((e) => e !== main)]),
    };
    // Journal first: the proposal is in the database before any file is touched.
    const journaled = (await this.core.store.update(t.id, "analyzing", { proposal })) ?? t;
    return this.applyAndSettle(journaled, proposal, "analyzing", check);
  }

  /** Tier 2/3 with a proposer: ask, check the answer parses and validates, store it as `proposed`. */
  private async propose(t: Ticket, proposer: Proposer): Promise<Outcome> {
    const scanRoot = this.core.scanRootOf(t);
    const check = checkDomain(scanRoot, { cache: this.core.parseCache });
    const target = this.core.contractOf(t, check);
    if (!target)
      return this.fail(t, "analyzing", `no contract to propose a fix for (${t.contract_fqn ?? "no contract named in the report"})`);
    if (String(target.data.kind).toLowerCase() === "infra")
      return this.fail(t, "analyzing", "an Infra contract is never changed by a model's proposal; fix it by hand");
    const waiting = await this.budgetWait(t);
    if (waiting) return waiting;
    const file = projectPath(this.core.layout.root, target.absPath);
    const result = await proposer.propose({
      ticket: t,
      contract: { fqn: t.contract_fqn, file, source: target.source },
      findings: check.findings.filter((f) => resolve(f.file) === target.absPath),
      history: this.core.diffs.forContract(t.contract_fqn),
      referenced: referencedContracts(target, check.loaded, this.core.layout.root, t.context.route_fqn),
      check: (after) => {
        const parsed = parseContractSource(after, target.absPath, target.file);
        if (!("contract" in parsed)) return [`not a readable contract: ${firstMessage(parsed.findings)}`];
        const schema = validateContractSchema(parsed.contract);
        if (schema.length > 0) return schema.map((f) => `${f.message}${f.path ? ` at ${f.path}` : ""}`);
        return candidateProblems(scanRoot, target.absPath, after, t, check);
      },
    });
    if (this.core.stopping.signal.aborted) {
      const back = await this.core.store.transition(t.id, "analyzing", "queued", {
        resolution_note: "requeued: the Healer stopped while a proposal was being made",
      });
      return { ticket: back ?? t };
    }
    this.core.budget.spend(t.fingerprint, Math.max(1, result.attempts ?? 1) - 1);
    if ("reason" in result) return this.fail(t, "analyzing", `no proposal: ${result.reason}`);
    // The proposer checked its answer; a second look keeps a careless proposer from storing junk.
    const parsed = parseContractSource(result.after, target.absPath, target.file);
    if (!("contract" in parsed)) return this.fail(t, "analyzing", `proposal is not a readable contract: ${firstMessage(parsed.findings)}`);
    const schema = validateContractSchema(parsed.contract);
    if (schema.length > 0) return this.fail(t, "analyzing", `proposal does not validate: ${firstMessage(schema)}`);
    const changes = diffJson(target.data, parsed.contract.data);
    if (changes.length === 0) return this.fail(t, "analyzing", "proposal changes nothing");
    const guarded = guardedChangeReason(target.data, parsed.contract.data, changes);
    if (guarded) return this.fail(t, "analyzing", `proposal refused: ${guarded}; a model's proposal never does this, change it by hand`);
    const verification = verifyCandidate(scanRoot, target.absPath, result.after);
    // Judged as `charter plan` would judge it, before anyone sees it: the plan's facts lead the
    // consequences, merged with what the contract change means.
    const plan = await planProposal({
      root: this.core.layout.root,
      scanRoot,
      targetAbs: target.absPath,
      after: result.after,
      runtimeDir: this.core.layout.runtimeDir,
      env: this.core.env,
    });
    const risk = mergeConsequences(planConsequences(plan, file), reviewContractRisk(target.data, parsed.contract.data, file, result.after));
    const proposal: Proposal = {
      contract_fqn: t.contract_fqn,
      file,
      before: target.source,
      after: result.after,
      changes,
      related: [],
      explanation: result.explanation,
      confidence: result.confidence ?? (t.tier === 2 ? 0.7 : 0.5),
      method: result.method ?? (t.tier === 2 ? "llm_structural" : "llm_runtime"),
      created_at: isoWithOffset(this.core.clock()),
      ...(result.attempts !== undefined ? { attempts: result.attempts } : {}),
      verification,
      risk,
      plan,
    };
    const proposed = await this.core.store.transition(t.id, "analyzing", "proposed", { proposal, resolution_note: "" });
    if (!proposed) return { ticket: (await this.core.store.get(t.id)) ?? t };
    this.core.emit(
      "proposed",
      proposed,
      `${changes.length} change(s) proposed (${proposal.method}, confidence ${proposal.confidence}): ${result.explanation}; review: ${this.core.viewUrl(t.id)}`,
    );
    return { ticket: proposed };
  }

  async applyApproved(t: Ticket): Promise<Outcome> {
    if (!t.proposal) return this.fail(t, "approved", "approved ticket has no proposal");
    return this.applyAndSettle(t, t.proposal, "approved");
  }

  /** Applies under the project's apply lock, then moves the ticket to `applied` or `failed`. */
  private async applyAndSettle(t: Ticket, proposal: Proposal, from: TicketStatus, baseline?: CheckResult): Promise<Outcome> {
    await this.lock();
    let r: ApplyResult;
    try {
      r = applyProposal(
        { layout: this.core.layout, diffs: this.core.diffs, regenerate: this.core.regenerate, cache: this.core.parseCache },
        t,
        proposal,
        baseline,
      );
    } catch (e) {
      r = { ok: false, reason: `could not apply the fix: ${(e as Error).message}` };
    } finally {
      this.core.forgetView();
      await this.core.store.unlock("apply");
    }
    if (!r.ok) return this.fail(t, from, r.reason);
    const changes = proposal.changes.length + proposal.related.reduce((n, e) => n + e.changes.length, 0);
    const note = `applied ${changes} change(s); ${r.note}`;
    const done = await this.core.store.transition(t.id, from, "applied", { diff_id: r.diff.id, resolution_note: note });
    if (!done) return { ticket: (await this.core.store.get(t.id)) ?? t };
    const files = proposal.related.length ? ` (+${proposal.related.length} related contract(s))` : "";
    this.core.emit("applied", done, `applied ${changes} change(s) to ${proposal.file}${files}; ${r.note}; diff ${r.diff.id}`);
    return { ticket: done, regenerated: r.regenerated };
  }

  private async lock(): Promise<void> {
    const deadline = Date.now() + 120_000;
    while (!(await this.core.store.tryLock("apply"))) {
      if (Date.now() > deadline)
        throw new HealerError("invalid_state", "another Healer process has been applying fixes for over 2 minutes");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async fail(t: Ticket, from: TicketStatus, reason: string): Promise<Outcome> {
    const failed = await this.core.store.transition(t.id, from, "failed", { resolution_note: reason });
    if (failed) this.core.emit("failed", failed, reason);
    return { ticket: failed ?? (await this.core.store.get(t.id)) ?? t };
  }

  /**
   * Null when a model call may be made for `t` now; otherwise the ticket goes back to `queued`
   * with a note (shown on the index page) and a timer resumes the queue when the budget frees up.
   */
  private async budgetWait(t: Ticket): Promise<Outcome | null> {
    const proposed = (await this.core.store.countByStatus()).proposed;
    const wait = proposed >= this.core.budget.limits.maxOpenProposals ? null : this.core.budget.take(t.fingerprint);
    if (wait === 0) return null;
    const why =
      wait === null
        ? `${proposed} proposals await a decision (at most ${this.core.budget.limits.maxOpenProposals}); approve or reject some first`
        : `the model-call budget is spent for now (${this.core.budget.limits.perMinute} per minute, ${this.core.budget.limits.perFingerprint} per error)`;
    const back = await this.core.store.transition(t.id, "analyzing", "queued", { resolution_note: `${BUDGET_NOTE}: ${why}` });
    if (wait !== null) this.wakeIn(wait);
    return { ticket: back ?? t, deferred: true };
  }

  /** Stops the timer that would resume the queue (the service stopping). */
  cancelWake(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
  }

  private wakeIn(ms: number): void {
    if (this.wakeTimer || this.core.stopping.signal.aborted) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      void this.processQueue().catch(() => undefined);
    }, ms + 50);
    this.wakeTimer.unref();
  }

  /** Queued tickets held back by the budget (the index page says how many). */
  async waitingForBudget(): Promise<number> {
    const queued = await this.core.store.list({ status: "queued" });
    return queued.filter((t) => t.resolution_note.startsWith(BUDGET_NOTE)).length;
  }
}

/** Where a ticket waiting for the model budget says so. */
export const BUDGET_NOTE = "waiting for the model-call budget";

function firstMessage(findings: readonly Finding[]): string {
  const f = findings[0];
  return f ? `${f.message}${f.path ? ` at ${f.path}` : ""}` : "unknown error";
}

/**
 * The contracts `c` names anywhere in its data (`requires`, references, mixins, state machine,
 * route or page entity): every string that is the FQN of a loaded contract; plus the Route that
 * served a failing request (a runtime report names it in its context), whose rules may be at fault.
 */
function referencedContracts(
  c: LoadedContract,
  loaded: readonly LoadedContract[],
  root: string,
  route?: unknown,
): ProposerInput["referenced"] {
  const byFqn = new Map<string, LoadedContract>();
  for (const l of loaded) {
    const fqn = fqnOfLoaded(l);
    if (fqn && l !== c) byFqn.set(fqn, l);
  }
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      if (byFqn.has(v)) found.add(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(c.data);
  if (typeof route === "string" && byFqn.has(route)) found.add(route);
  return [...found].sort().map((fqn) => {
    const l = byFqn.get(fqn) as LoadedContract;
    return { fqn, file: projectPath(root, l.absPath), source: l.source };
  });
}
