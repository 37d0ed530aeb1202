import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { CheckResult } from "../compiler/index.js";
import { checkDomain } from "../compiler/index.js";
import type { Finding, LoadedContract } from "../contracts/index.js";
import { ParseCache, parseContractSource, validateContractSchema } from "../contracts/index.js";
import { buildSchemaModel } from "../generators/postgres/model.js";
import { CONFIGURE_HINT, selectProvider } from "../llm/index.js";
import { type ApplyResult, applyProposal, type ProjectLayout, projectLayout, type Regenerator, regenerateAll } from "./apply.js";
import { removeStaleTemps } from "./atomic.js";
import { CallBudget, type CallBudgetLimits, guardedChangeReason } from "./budget.js";
import { classifyError, notFixableDiagnostic } from "./classify.js";
import { type Clock, isoWithOffset, systemClock } from "./clock.js";
import { DiffStore } from "./diff-store.js";
import { HealerError } from "./errors.js";
import { fingerprintOf } from "./fingerprint.js";
import { diffJson } from "./json-patch.js";
import { LlmProposer } from "./llm-proposer.js";
import { type HealerStatus, healerStatus } from "./metrics.js";
import { normaliseContract, projectPath } from "./normalise.js";
import { Notifier } from "./notify.js";
import { openTicketStore } from "./open-store.js";
import { NO_PROVIDER_NOTE, type Proposer, type ProposerInput } from "./proposer.js";
import { redactContext, redactSecrets, redactText, redactValue } from "./redact.js";
import { realPathInside, unsafeFqnReason } from "./safety.js";
import { type IngestResult, type NewTicket, PROCESS_OWNER, type TicketStore, takeRequestIds } from "./store.js";
import {
  type DiffRecord,
  type ErrorReport,
  type NotificationEvent,
  OPEN_STATUSES,
  type Proposal,
  TICKET_SOURCES,
  type Ticket,
  type TicketContext,
  type TicketStatus,
} from "./types.js";
import { candidateProblems, verifyCandidate } from "./verify.js";

export interface HealerOptions {
  /** Where `.forge/` and `runtime/` live. */
  projectRoot: string;
  domainsDir?: string;
  /** What `scan()` validates by default: the domains directory, or the one domain the project was given as. */
  scanDir?: string;
  runtimeDir?: string;
  /**
   * Tier 2/3 proposer. Default: the LLM provider the environment selects (`selectProvider`);
   * `null` means none. Without one, tier 2/3 tickets fail with a note saying how to configure one.
   */
  proposer?: Proposer | null;
  notifier?: Notifier;
  /** Environment for the webhook settings and the view link (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Console channel of the default notifier; `null` silences it. */
  console?: ((line: string) => void) | null;
  clock?: Clock;
  regenerate?: Regenerator;
  /** The ticket store; default: PostgreSQL when `HEALER_DATABASE_URL` is set in `env`, else `.forge/healer/healer.db`. */
  store?: TicketStore;
  /** Model-call budgets; default from `SVC_HEALER_LLM_CALLS_PER_MINUTE` and friends (budget.ts). */
  budget?: Partial<CallBudgetLimits>;
}

/** What one `process` pass did. */
export interface RunSummary {
  processed: number;
  applied: number;
  failed: number;
  proposed: number;
  /** Files produced by the regenerations of this pass (the last one counts: each is a full regeneration). */
  regenerated: number;
}

/** The result of `healer fix`. */
export interface FixSummary {
  scanned: string;
  contracts: number;
  errors: number;
  warnings: number;
  tickets: number;
  newTickets: number;
  applied: number;
  awaiting: number;
  failed: number;
  remainingErrors: number;
  regenerated: number;
  ticketIds: string[];
}

/**
 * The Healer pipeline: report -> ticket (classified, fingerprinted, queued) -> claim -> propose ->
 * apply -> notify. The CLI and the HTTP service (a later issue) call these same methods; nothing
 * here prints except through the notifier.
 */
export class Healer {
  readonly layout: ProjectLayout;
  readonly scanDir: string;
  readonly store: TicketStore;
  readonly notifier: Notifier;
  readonly diffs: DiffStore;
  readonly proposer: Proposer | null;
  /** Why there is no proposer, and what to set (shown in the failure note). */
  readonly noProposerReason: string;
  private readonly clock: Clock;
  private readonly regenerate: Regenerator;
  /** Aborted by `cancelPending`: LLM calls in flight end at once (the service stopping). */
  private readonly stopping = new AbortController();
  readonly env: NodeJS.ProcessEnv;
  /** Model calls per minute (global and per fingerprint) and the cap on proposals awaiting a decision. */
  private readonly budget: CallBudget;
  /** A timer that resumes the queue once the budget frees up. */
  private wakeTimer: NodeJS.Timeout | null = null;
  /**
   * What reports are read against (routes, Infra files, the generated schema's names), derived
   * from one check of the domain kept for a second: a burst of reports checks it once.
   */
  private domainView: DomainView | null = null;
  /**
   * Contracts parsed by earlier checks, reused while their bytes are unchanged: a fix checks the
   * whole domain before and after its edit. `CHARTER_PARSE_CACHE=off` turns it off (the benchmark
   * compares both in one run).
   */
  readonly parseCache: ParseCache | undefined;

  constructor(options: HealerOptions) {
    this.layout = projectLayout(options.projectRoot, { domainsDir: options.domainsDir, runtimeDir: options.runtimeDir });
    this.scanDir = resolve(options.scanDir ?? this.layout.domainsDir);
    this.clock = options.clock ?? systemClock;
    this.env = options.env ?? process.env;
    this.parseCache = (this.env.CHARTER_PARSE_CACHE ?? process.env.CHARTER_PARSE_CACHE) === "off" ? undefined : new ParseCache();
    this.store =
      options.store ?? openTicketStore({ sqlitePath: this.layout.dbPath, databaseUrl: this.env.HEALER_DATABASE_URL, now: this.clock });
    this.notifier =
      options.notifier ??
      Notifier.fromEnv(this.layout.jsonlPath, this.env, options.console === undefined ? {} : { console: options.console });
    this.diffs = new DiffStore(this.layout.diffsDir);
    if (options.proposer !== undefined) {
      this.proposer = options.proposer;
      this.noProposerReason = `${NO_PROVIDER_NOTE}: ${CONFIGURE_HINT}`;
    } else {
      const choice = selectProvider(this.env);
      this.proposer = choice.ok ? new LlmProposer({ selection: choice, signal: this.stopping.signal }) : null;
      const why = choice.ok || choice.reason === NO_PROVIDER_NOTE ? "" : ` (${choice.reason})`;
      this.noProposerReason = choice.ok ? "" : `${NO_PROVIDER_NOTE}${why}: ${choice.hint}`;
    }
    this.regenerate = options.regenerate ?? regenerateAll;
    this.budget = new CallBudget({ ...CallBudget.limitsFromEnv(this.env), ...options.budget });
  }

  /**
   * Ends LLM calls in flight; their tickets go back to the queue (not to `failed`), so the next
   * run, or the service's next start, asks again.
   */
  cancelPending(): void {
    this.stopping.abort();
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
  }

  /** Waits for webhook deliveries in flight (bounded by their timeout) and closes the store. */
  async close(): Promise<void> {
    await this.notifier.flush();
    await this.store.close();
  }

  // ---- intake -------------------------------------------------------------------------------

  /** Turns a report into a ticket, or into one more occurrence of the open ticket it repeats. */
  async report(report: ErrorReport): Promise<IngestResult> {
    const result = await this.store.ingest(this.newTicket(report));
    if (result.created) this.emit("queued", result.ticket, queuedMessage(result.ticket));
    return result;
  }

  /** Several reports in one transaction (all become tickets or none do). */
  async reportMany(reports: readonly ErrorReport[]): Promise<IngestResult[]> {
    const results = await this.store.ingestMany(reports.map((r) => this.newTicket(r)));
    for (const r of results) if (r.created) this.emit("queued", r.ticket, queuedMessage(r.ticket));
    return results;
  }

  /**
   * A batch of reports from independent callers (the HTTP ingest's group commit): each is checked
   * on its own, so one bad report fails alone, and the good ones are stored in one transaction.
   */
  async reportBatch(reports: readonly ErrorReport[]): Promise<(IngestResult | { error: HealerError })[]> {
    const domain = this.view();
    const prepared = reports.map((r) => {
      try {
        return this.newTicket(r, domain);
      } catch (e) {
        if (e instanceof HealerError) return e;
        throw e;
      }
    });
    const valid = prepared.filter((p): p is NewTicket => !(p instanceof HealerError));
    let stored: (IngestResult | HealerError)[];
    try {
      stored = await this.store.ingestMany(valid);
    } catch {
      // Something in the batch the checks above let through still failed the transaction: each
      // report is stored again on its own, so only the bad one fails, with the store's reason.
      stored = await Promise.all(
        valid.map((t) =>
          this.store
            .ingest(t)
            .catch((e: Error) => new HealerError("invalid_report", `the report could not be stored: ${e.message.slice(0, 300)}`)),
        ),
      );
    }
    let i = 0;
    return prepared.map((p) => {
      if (p instanceof HealerError) return { error: p };
      const r = stored[i++] as IngestResult | HealerError;
      if (r instanceof HealerError) return { error: r };
      if (r.created) this.emit("queued", r.ticket, queuedMessage(r.ticket));
      return r;
    });
  }

  /**
   * A report as a ticket to store. `routes` marks a report from the wire (the HTTP ingest), which
   * is untrusted (docs/threat-model.md): no scan root, a runtime error's contract is the entity
   * its request path maps to (whatever FQN it names), a validation report's file must lie in the
   * domains directory, and its text is redacted of secrets.
   */
  private newTicket(report: ErrorReport, domain?: { routes: readonly RouteEntry[]; infra: ReadonlySet<string> }): NewTicket {
    if (!(TICKET_SOURCES as readonly string[]).includes(report.source)) {
      throw new HealerError("invalid_report", `source must be one of ${TICKET_SOURCES.join(", ")}`);
    }
    if (typeof report.error !== "string" || report.error.trim() === "")
      throw new HealerError("invalid_report", "error must be a non-empty string");
    const { context: reported, ids } = takeRequestIds(report.context);
    let context: TicketContext = { ...reported };
    if (report.stacktrace !== undefined) context.stacktrace = report.stacktrace;
    let fqn = report.contract_fqn ?? null;
    let rawError = report.error;
    if (domain) {
      delete context.scan_root;
      context = redactValue(context, this.env);
      if (report.source === "runtime" || report.source === "manual") rawError = redactSecrets(rawError, this.env);
      // Marks the ticket's text as the reporter's: the prompt quotes it as untrusted data.
      context.origin = "ingest";
      if (report.source === "runtime" || report.source === "manual") {
        const path = typeof context.request_path === "string" ? context.request_path : context.path;
        const route = typeof path === "string" ? routeOf(domain.routes, path) : undefined;
        // A Route's validation rule that raised is that Route's fault, not its entity's: the rules
        // run in the generated app/rules.py, whose frame the trace shows.
        const trace = typeof context.stacktrace === "string" ? context.stacktrace : "";
        fqn = (route?.fqn && RULE_FRAME.test(trace) ? route.fqn : route?.entity) ?? null;
        if (route?.fqn) context.route_fqn = route.fqn;
        else delete context.route_fqn;
      } else if (typeof context.source_path === "string") {
        const abs = resolve(this.layout.root, context.source_path);
        if (!realPathInside(abs, this.layout.domainsDir).ok)
          throw new HealerError(
            "invalid_report",
            `context.source_path ${JSON.stringify(context.source_path)} is refused: it is not a file of the domains directory`,
          );
        if (domain.infra.has(abs))
          throw new HealerError(
            "invalid_report",
            `context.source_path ${JSON.stringify(context.source_path)} is refused: a report cannot target an Infra contract`,
          );
        context.source_path = projectPath(this.layout.root, abs);
      }
    }
    // A runtime report quotes the rows it failed on: the ticket keeps none of their values.
    if (report.source === "runtime") {
      rawError = redactText(rawError);
      context = redactContext(context);
    }
    const status = typeof context.status_code === "number" ? context.status_code : undefined;
    const c = classifyError({ source: report.source, message: rawError, statusCode: status, defines: this.defines, ...findingOf(context) });
    if (fqn !== null) {
      if (typeof fqn !== "string") throw new HealerError("invalid_report", "contract_fqn must be a string");
      const why = unsafeFqnReason(fqn);
      if (why) throw new HealerError("invalid_report", `contract_fqn ${JSON.stringify(fqn)} is refused: it ${why}`);
      if (domain && fqn.toLowerCase().startsWith("infra/"))
        throw new HealerError("invalid_report", `contract_fqn ${JSON.stringify(fqn)} is refused: a report cannot target an Infra contract`);
    }
    return {
      source: report.source,
      contract_fqn: fqn,
      error_type: c.errorType,
      raw_error: rawError,
      context,
      tier: c.tier,
      priority: c.priority,
      fixable_by: c.fixableBy,
      fingerprint: fingerprintOf(fqn, c.errorType, rawError, report.source),
      ...ids,
      foldIntoFailed: this.proposer ? null : NO_PROVIDER_NOTE,
    };
  }

  /** Validates a domain directory and files one ticket per error finding. */
  async scan(path: string = this.scanDir): Promise<{ check: CheckResult; tickets: IngestResult[] }> {
    const scanRoot = resolve(path);
    if (!existsSync(scanRoot)) throw new HealerError("invalid_report", `path not found: ${path}`);
    // Work of a killed run goes back to the queue first, so the obsolete check below sees it as it is.
    await this.recover();
    const check = checkDomain(scanRoot, { cache: this.parseCache });
    // A writer killed between its temporary file and the rename leaves the temporary behind.
    for (const dir of new Set(check.contracts.map((c) => dirname(resolve(c.file))))) removeStaleTemps(dir);
    const rel = projectPath(this.layout.root, scanRoot);
    const reports: ErrorReport[] = check.findings
      .filter((f) => f.severity === "error")
      .map((f) => ({
        source: f.code.startsWith("schema.") || f.code.startsWith("yaml.") || f.code.startsWith("file.") ? "validation" : "compilation",
        contract_fqn: f.fqn ?? null,
        error: f.message,
        context: {
          source_path: projectPath(this.layout.root, resolve(f.file)),
          pointer: f.path,
          code: f.code,
          schema_path: f.schemaPath,
          line: f.line,
          column: f.column,
          scan_root: rel,
        },
      }));
    const tickets = await this.reportMany(reports);
    await this.closeObsolete(rel, reports);
    return { check, tickets };
  }

  /**
   * Closes waiting tickets of this scan root whose error the scan no longer reports (fixed by hand,
   * or the contract was removed): they move to `rejected` with a note saying why, so the queue only
   * holds live problems and a stale proposal can never be applied over a newer contract.
   * A ticket whose fix is journaled and already on disk (a run killed between writing the file and
   * recording the result) is not obsolete: its error is gone because of it, and the queue finishes it.
   */
  private async closeObsolete(scanRoot: string, current: readonly ErrorReport[]): Promise<void> {
    const live = new Set(current.map((r) => `${r.context?.source_path}\u0000${r.error}`));
    for (const status of ["queued", "proposed"] as const) {
      for (const t of await this.store.list({ status })) {
        if ((t.source !== "validation" && t.source !== "compilation") || t.context.scan_root !== scanRoot) continue;
        if (live.has(`${t.context.source_path}\u0000${t.raw_error}`)) continue;
        if (t.proposal && this.onDisk(t.proposal)) continue;
        const note = "obsolete: a later scan no longer reports this error (fixed outside the Healer)";
        const closed = await this.store.transition(t.id, status, "rejected", { resolution_note: note });
        if (closed) this.emit("rejected", closed, note);
      }
    }
  }

  // ---- processing ---------------------------------------------------------------------------

  /**
   * Works through the queue until it is empty: first finishes fixes an interrupted run left
   * approved, then claims queued tickets one at a time (priority, then age).
   */
  async processQueue(): Promise<RunSummary> {
    const summary: RunSummary = { processed: 0, applied: 0, failed: 0, proposed: 0, regenerated: 0 };
    await this.recover();
    for (let t = await this.store.claimApproved(); t; t = await this.store.claimApproved()) {
      this.count(summary, await this.applyApproved(t));
    }
    for (let t = await this.store.claimNext(); t; t = await this.store.claimNext()) {
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
    const t = await this.store.resolve(idOrPrefix);
    const claimed = await this.store.claim(t.id);
    if (!claimed) return (await this.store.get(t.id)) as Ticket;
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
      const status = typeof t.context.status_code === "number" ? t.context.status_code : undefined;
      const c = classifyError({
        source: t.source,
        message: t.raw_error,
        statusCode: status,
        defines: this.defines,
        ...findingOf(t.context),
      });
      if (c.errorType !== t.error_type || c.tier !== t.tier || c.priority !== t.priority || c.fixableBy !== t.fixable_by) {
        t =
          (await this.store.update(t.id, "analyzing", {
            error_type: c.errorType,
            tier: c.tier,
            priority: c.priority,
            fixable_by: c.fixableBy,
          })) ?? t;
      }
      if (c.fixableBy !== "contract") return await this.fail(t, "analyzing", notFixableDiagnostic(c));
      if (t.tier === 1) return await this.fixDeterministic(t);
      if (!this.proposer) return await this.fail(t, "analyzing", this.noProposerReason);
      return await this.propose(t, this.proposer);
    } catch (e) {
      if (e instanceof HealerError) throw e;
      return this.fail(t, "analyzing", `internal error while processing: ${(e as Error).message}`);
    }
  }

  /** Tier 1: normalise the contract and apply the result at once (SPEC.md: automatic). */
  private async fixDeterministic(t: Ticket): Promise<Outcome> {
    // A proposal recorded by an interrupted run is finished, not recomputed: its files may already
    // be half written, and apply.ts knows how to complete exactly that proposal.
    if (t.proposal) return this.applyAndSettle(t, t.proposal, "analyzing");
    const scanRoot = this.scanRootOf(t);
    const check = checkDomain(scanRoot, { cache: this.parseCache });
    const target = this.contractOf(t, check);
    if (!target)
      return this.fail(
        t,
        "analyzing",
        `contract file of ${t.contract_fqn ?? "the ticket"} not found under ${projectPath(this.layout.root, scanRoot)}`,
      );
    if (t.source === "validation" || t.source === "compilation") {
      const present = check.findings.some((f) => f.severity === "error" && resolve(f.file) === target.absPath && f.message === t.raw_error);
      if (!present) {
        const done = await this.store.transition(t.id, "analyzing", "applied", {
          resolution_note: "already resolved by an earlier fix; nothing to change",
        });
        if (done) this.emit("applied", done, `${done.contract_fqn ?? "contract"}: already resolved by an earlier fix; nothing to change`);
        return { ticket: done ?? t };
      }
    }
    const result = normaliseContract(target.absPath, check.loaded, check.findings, this.layout.root);
    const main = result.edits.find((e) => resolve(this.layout.root, e.file) === target.absPath);
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
      created_at: isoWithOffset(this.clock()),
    };
    // Journal first: the proposal is in the database before any file is touched.
    const journaled = (await this.store.update(t.id, "analyzing", { proposal })) ?? t;
    return this.applyAndSettle(journaled, proposal, "analyzing", check);
  }

  /** Tier 2/3 with a proposer: ask, check the answer parses and validates, store it as `proposed`. */
  private async propose(t: Ticket, proposer: Proposer): Promise<Outcome> {
    const scanRoot = this.scanRootOf(t);
    const check = checkDomain(scanRoot, { cache: this.parseCache });
    const target = this.contractOf(t, check);
    if (!target)
      return this.fail(t, "analyzing", `no contract to propose a fix for (${t.contract_fqn ?? "no contract named in the report"})`);
    if (String(target.data.kind).toLowerCase() === "infra")
      return this.fail(t, "analyzing", "an Infra contract is never changed by a model's proposal; fix it by hand");
    const waiting = await this.budgetWait(t);
    if (waiting) return waiting;
    const file = projectPath(this.layout.root, target.absPath);
    const result = await proposer.propose({
      ticket: t,
      contract: { fqn: t.contract_fqn, file, source: target.source },
      findings: check.findings.filter((f) => resolve(f.file) === target.absPath),
      history: this.diffs.forContract(t.contract_fqn),
      referenced: referencedContracts(target, check.loaded, this.layout.root, t.context.route_fqn),
      check: (after) => {
        const parsed = parseContractSource(after, target.absPath, target.file);
        if (!("contract" in parsed)) return [`not a readable contract: ${firstMessage(parsed.findings)}`];
        const schema = validateContractSchema(parsed.contract);
        if (schema.length > 0) return schema.map((f) => `${f.message}${f.path ? ` at ${f.path}` : ""}`);
        return candidateProblems(scanRoot, target.absPath, after, t, check);
      },
    });
    if (this.stopping.signal.aborted) {
      const back = await this.store.transition(t.id, "analyzing", "queued", {
        resolution_note: "requeued: the Healer stopped while a proposal was being made",
      });
      return { ticket: back ?? t };
    }
    this.budget.spend(t.fingerprint, Math.max(1, result.attempts ?? 1) - 1);
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
      created_at: isoWithOffset(this.clock()),
      ...(result.attempts !== undefined ? { attempts: result.attempts } : {}),
      verification,
    };
    const proposed = await this.store.transition(t.id, "analyzing", "proposed", { proposal, resolution_note: "" });
    if (!proposed) return { ticket: (await this.store.get(t.id)) ?? t };
    this.emit(
      "proposed",
      proposed,
      `${changes.length} change(s) proposed (${proposal.method}, confidence ${proposal.confidence}): ${result.explanation}; review: ${this.viewUrl(t.id)}`,
    );
    return { ticket: proposed };
  }

  /** Requeues tickets of processes that died mid-way (see `TicketStore.recoverStale`). */
  async recover(): Promise<void> {
    await this.store.recoverStale();
  }

  /** Whether the ticket's contract file already holds the proposal's text. */
  private onDisk(p: Proposal): boolean {
    try {
      return readFileSync(resolve(this.layout.root, p.file), "utf8") === p.after;
    } catch {
      return false;
    }
  }

  private async applyApproved(t: Ticket): Promise<Outcome> {
    if (!t.proposal) return this.fail(t, "approved", "approved ticket has no proposal");
    return this.applyAndSettle(t, t.proposal, "approved");
  }

  /** Applies under the project's apply lock, then moves the ticket to `applied` or `failed`. */
  private async applyAndSettle(t: Ticket, proposal: Proposal, from: TicketStatus, baseline?: CheckResult): Promise<Outcome> {
    await this.lock();
    let r: ApplyResult;
    try {
      r = applyProposal(
        { layout: this.layout, diffs: this.diffs, regenerate: this.regenerate, cache: this.parseCache },
        t,
        proposal,
        baseline,
      );
    } catch (e) {
      r = { ok: false, reason: `could not apply the fix: ${(e as Error).message}` };
    } finally {
      await this.store.unlock("apply");
    }
    if (!r.ok) return this.fail(t, from, r.reason);
    const changes = proposal.changes.length + proposal.related.reduce((n, e) => n + e.changes.length, 0);
    const note = `applied ${changes} change(s); ${r.note}`;
    const done = await this.store.transition(t.id, from, "applied", { diff_id: r.diff.id, resolution_note: note });
    if (!done) return { ticket: (await this.store.get(t.id)) ?? t };
    const files = proposal.related.length ? ` (+${proposal.related.length} related contract(s))` : "";
    this.emit("applied", done, `applied ${changes} change(s) to ${proposal.file}${files}; ${r.note}; diff ${r.diff.id}`);
    return { ticket: done, regenerated: r.regenerated };
  }

  private async lock(): Promise<void> {
    const deadline = Date.now() + 120_000;
    while (!(await this.store.tryLock("apply"))) {
      if (Date.now() > deadline)
        throw new HealerError("invalid_state", "another Healer process has been applying fixes for over 2 minutes");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async fail(t: Ticket, from: TicketStatus, reason: string): Promise<Outcome> {
    const failed = await this.store.transition(t.id, from, "failed", { resolution_note: reason });
    if (failed) this.emit("failed", failed, reason);
    return { ticket: failed ?? (await this.store.get(t.id)) ?? t };
  }

  // ---- human decisions ----------------------------------------------------------------------

  /** `proposed` -> `approved` -> apply -> `applied` or `failed`. */
  async approve(idOrPrefix: string): Promise<Ticket> {
    const t = await this.store.resolve(idOrPrefix);
    if (t.status !== "proposed")
      throw new HealerError("invalid_state", `ticket ${t.id.slice(0, 8)} is ${t.status}; only a proposed ticket can be approved`);
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

  // ---- helpers --------------------------------------------------------------------------------

  /**
   * Whether the generated schema has a table or column of this name: a missing one it has is
   * database drift, one it lacks is the generated code's own invention. An invalid domain cannot
   * tell, and counts as defining it (drift is the milder verdict: nothing gets blamed wrongly).
   */
  private readonly defines = (kind: "table" | "column", name: string): boolean => this.view().names?.has(`${kind}\u0000${name}`) ?? true;

  /**
   * Where the ticket's domain is checked: the domains directory, or the directory a `healer fix
   * PATH` scan recorded, when that lies inside the project (the wire can no longer set one, and a
   * ticket stored before that could not lead anywhere else).
   */
  private scanRootOf(t: Ticket): string {
    const recorded = t.context.scan_root;
    if (typeof recorded === "string") {
      const abs = resolve(this.layout.root, recorded);
      // Lexically inside: apply.ts checks the real path of every file it writes.
      const rel = relative(this.layout.root, abs);
      if (!rel.startsWith("..") && !isAbsolute(rel)) return abs;
    }
    return this.scanDir;
  }

  /** The domain as reports see it; routes are empty and names unknown while it does not compile. */
  private view(): DomainView {
    const now = Date.now();
    if (this.domainView && now - this.domainView.at < 1000) return this.domainView;
    let routes: RouteEntry[] = [];
    let infra = new Set<string>();
    let names: Set<string> | null = null;
    try {
      const check = existsSync(this.scanDir) ? checkDomain(this.scanDir, { cache: this.parseCache }) : undefined;
      infra = new Set((check?.loaded ?? []).filter((c) => String(c.data.kind).toLowerCase() === "infra").map((c) => c.absPath));
      const ir = check?.ir;
      if (ir) {
        // Route contracts first; an entity without one is still served at its own base path.
        routes = [
          ...ir.routes.map((r) => ({ basePath: r.basePath, entity: r.entity, fqn: r.fqn as string | null })),
          ...ir.entities
            .filter((e) => !ir.routes.some((r) => r.entity === e.fqn))
            .map((e) => ({ basePath: e.basePath, entity: e.fqn, fqn: null })),
        ];
        names = new Set();
        for (const table of buildSchemaModel(ir).tables) {
          names.add(`table\u0000${table.name}`);
          for (const column of table.columns) names.add(`column\u0000${column.name}`);
        }
      }
    } catch {
      routes = [];
      names = null;
    }
    this.domainView = { at: now, routes, infra, names };
    return this.domainView;
  }

  /**
   * Null when a model call may be made for `t` now; otherwise the ticket goes back to `queued`
   * with a note (shown on the index page) and a timer resumes the queue when the budget frees up.
   */
  private async budgetWait(t: Ticket): Promise<Outcome | null> {
    const proposed = (await this.store.countByStatus()).proposed;
    const wait = proposed >= this.budget.limits.maxOpenProposals ? null : this.budget.take(t.fingerprint);
    if (wait === 0) return null;
    const why =
      wait === null
        ? `${proposed} proposals await a decision (at most ${this.budget.limits.maxOpenProposals}); approve or reject some first`
        : `the model-call budget is spent for now (${this.budget.limits.perMinute} per minute, ${this.budget.limits.perFingerprint} per error)`;
    const back = await this.store.transition(t.id, "analyzing", "queued", { resolution_note: `${BUDGET_NOTE}: ${why}` });
    if (wait !== null) this.wakeIn(wait);
    return { ticket: back ?? t, deferred: true };
  }

  private wakeIn(ms: number): void {
    if (this.wakeTimer || this.stopping.signal.aborted) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      void this.processQueue().catch(() => undefined);
    }, ms + 50);
    this.wakeTimer.unref();
  }

  /** Queued tickets held back by the budget (the index page says how many). */
  async waitingForBudget(): Promise<number> {
    const queued = await this.store.list({ status: "queued" });
    return queued.filter((t) => t.resolution_note.startsWith(BUDGET_NOTE)).length;
  }

  /** The ticket's contract: by its source path when known, else by FQN. */
  private contractOf(t: Ticket, check: CheckResult): LoadedContract | undefined {
    const src = t.context.source_path;
    if (src) {
      const abs = resolve(this.layout.root, src);
      const found = check.loaded.find((c) => c.absPath === abs);
      if (found) return found;
    }
    if (!t.contract_fqn) return undefined;
    return check.loaded.find((c) => fqnOfLoaded(c) === t.contract_fqn);
  }

  /** Where people reach the service (the view links of notifications); `healer serve` sets it once listening. */
  publicUrl: string | null = null;

  private viewUrl(id: string): string {
    const base =
      this.env.SVC_HEALER_PUBLIC_URL?.replace(/\/+$/, "") || this.publicUrl || `http://localhost:${this.env.SVC_HEALER_PORT || "8083"}`;
    return `${base}/healer/tickets/${id}/view`;
  }

  private emit(event: NotificationEvent, t: Ticket, message: string): void {
    this.notifier.notify({
      timestamp: isoWithOffset(this.clock()),
      event,
      ticket_id: t.id,
      contract_fqn: t.contract_fqn ?? "",
      status: t.status,
      tier: t.tier,
      priority: t.priority,
      message,
    });
  }
}

interface Outcome {
  ticket: Ticket;
  regenerated?: number;
  /** Put back in the queue to wait for the model-call budget. */
  deferred?: boolean;
}

type RouteEntry = { basePath: string; entity: string; fqn: string | null };

interface DomainView {
  at: number;
  routes: readonly RouteEntry[];
  infra: ReadonlySet<string>;
  /** `table\u0000name` and `column\u0000name` of the generated schema; null when the domain does not compile. */
  names: Set<string> | null;
}

/** The Route serving `path`, by the longest matching base path (as the generated app's reporter does). */
function routeOf(routes: readonly RouteEntry[], path: string): RouteEntry | undefined {
  const clean = path.split("?")[0] ?? "";
  let best: RouteEntry | undefined;
  for (const r of routes) {
    const base = r.basePath.replace(/\/+$/, "");
    if ((clean === r.basePath || clean === base || clean.startsWith(`${base}/`)) && (!best || r.basePath.length > best.basePath.length))
      best = r;
  }
  return best;
}

/** Where a ticket waiting for the model budget says so. */
export const BUDGET_NOTE = "waiting for the model-call budget";

/** A frame of the generated app's rule checks (`app/rules.py`) in a Python traceback. */
const RULE_FRAME = /File "[^"\n]*app\/rules\.py", line \d+, in (enforce|checked|plan)\b/;

/** The finding code and schema path a report carries in its context, for classification. */
function findingOf(context: TicketContext): { code?: string; schemaPath?: string } {
  return {
    ...(typeof context.code === "string" ? { code: context.code } : {}),
    ...(typeof context.schema_path === "string" ? { schemaPath: context.schema_path } : {}),
  };
}

function queuedMessage(t: Ticket): string {
  const kind = t.error_type || "unclassified error";
  return `${kind} (tier ${t.tier}, fixable by ${t.fixable_by}): ${t.raw_error.slice(0, 300)}`;
}

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

function fqnOfLoaded(c: LoadedContract): string | null {
  const meta = c.data.metadata as Record<string, unknown> | undefined;
  if (typeof c.data.kind !== "string" || typeof meta?.name !== "string" || typeof meta.domain !== "string") return null;
  return `${c.data.kind.toLowerCase()}/${meta.domain}/${meta.name}`;
}
