import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { CheckResult } from "../../compiler/index.js";
import { checkDomain } from "../../compiler/index.js";
import { removeStaleTemps } from "../apply/atomic.js";
import { realPathInside, unsafeFqnReason } from "../apply/safety.js";
import { HealerError } from "../errors.js";
import { classifyError } from "../intake/classify.js";
import { fingerprintOf } from "../intake/fingerprint.js";
import { redactContext, redactPersonal, redactPersonalValue, redactSecrets, redactText, redactValue } from "../intake/redact.js";
import { projectPath } from "../proposal/normalise.js";
import { type IngestResult, type NewTicket, takeRequestIds } from "../store/store.js";
import { type ErrorReport, REPORT_ID, TICKET_SOURCES, type Ticket, type TicketContext } from "../types.js";
import { findingOf, type HealerCore, type RouteEntry } from "./core.js";

/** Intake: reports and scans become tickets (classified, fingerprinted, deduplicated by the store). */
export class HealerIntake {
  constructor(private readonly core: HealerCore) {}

  /** Turns a report into a ticket, or into one more occurrence of the open ticket it repeats. */
  async report(report: ErrorReport): Promise<IngestResult> {
    const result = await this.core.store.ingest(this.newTicket(report));
    this.announce(result);
    return result;
  }

  /** Several reports in one transaction (all become tickets or none do). */
  async reportMany(reports: readonly ErrorReport[]): Promise<IngestResult[]> {
    const results = await this.core.store.ingestMany(reports.map((r) => this.newTicket(r)));
    for (const r of results) this.announce(r);
    return results;
  }

  /** A `queued` notification for a new ticket, and for a closed one a repeat put back in the queue. */
  private announce(r: IngestResult): void {
    if (r.created) this.core.emit("queued", r.ticket, queuedMessage(r.ticket));
    else if (r.reopened) this.core.emit("queued", r.ticket, `${r.ticket.resolution_note}; ${queuedMessage(r.ticket)}`);
  }

  /**
   * A batch of reports from independent callers (the HTTP ingest's group commit): each is checked
   * on its own, so one bad report fails alone, and the good ones are stored in one transaction.
   */
  async reportBatch(reports: readonly ErrorReport[]): Promise<(IngestResult | { error: HealerError })[]> {
    // A validation or compilation report speaks of a file that may have changed a moment ago: it is
    // checked against the domain as it is now, never against a view of up to a second ago.
    const fresh = reports.some((r) => r.source === "validation" || r.source === "compilation");
    const domain = this.core.view(fresh ? 0 : undefined);
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
      stored = await this.core.store.ingestMany(valid);
    } catch {
      // Something in the batch the checks above let through still failed the transaction: each
      // report is stored again on its own, so only the bad one fails, with the store's reason.
      stored = await Promise.all(
        valid.map((t) =>
          this.core.store
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
      this.announce(r);
      return r;
    });
  }

  /**
   * A report as a ticket to store. `domain` marks a report from the wire (the HTTP ingest), which
   * is untrusted (docs/threat-model.md): no scan root, a runtime error's contract is the entity
   * its request path maps to (whatever FQN it names), a validation report's file must lie in the
   * domains directory, and its text is redacted of secrets.
   */
  private newTicket(report: ErrorReport, domain?: WireDomain): NewTicket {
    if (!(TICKET_SOURCES as readonly string[]).includes(report.source)) {
      throw new HealerError("invalid_report", `source must be one of ${TICKET_SOURCES.join(", ")}`);
    }
    if (typeof report.error !== "string" || report.error.trim() === "")
      throw new HealerError("invalid_report", "error must be a non-empty string");
    const { context: reported, ids } = takeRequestIds(report.context);
    let r: Reported = { context: { ...reported }, fqn: report.contract_fqn ?? null, rawError: report.error };
    if (report.stacktrace !== undefined) r.context.stacktrace = report.stacktrace;
    if (domain) r = this.fromWire(report, r, domain);
    // A runtime report quotes the rows it failed on: the ticket keeps none of their values.
    if (report.source === "runtime") {
      r.rawError = redactText(redactSecrets(r.rawError, this.core.env));
      r.context = redactContext(r.context);
    }
    const { context, fqn, rawError } = r;
    const status = typeof context.status_code === "number" ? context.status_code : undefined;
    const c = classifyError({
      source: report.source,
      message: rawError,
      statusCode: status,
      defines: this.core.defines,
      ...findingOf(context),
    });
    if (fqn !== null) checkFqn(fqn, domain !== undefined);
    // A validation or compilation report from the wire is a claim about the contracts: it is
    // checked against the Healer's own validation, so made-up text never costs a model call.
    if (domain && (report.source === "validation" || report.source === "compilation")) this.checkClaim(report, r, domain);
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
      ...(typeof report.report_id === "string" && REPORT_ID.test(report.report_id) ? { report_id: report.report_id } : {}),
      ...this.core.attemptKeys(),
    };
  }

  /** A report from the wire: redacted, its contract found from its request path or its file checked. */
  private fromWire(report: ErrorReport, reported: Reported, domain: WireDomain): Reported {
    let { context, fqn, rawError } = reported;
    delete context.scan_root;
    // Every kind of report from the wire is redacted before it is stored: secrets from all, and
    // people's addresses and numbers from the texts a person or a client wrote.
    const personal = report.source !== "runtime";
    context = personal ? redactPersonalValue(context, this.core.env) : redactValue(context, this.core.env);
    rawError = personal ? redactPersonal(rawError, this.core.env) : redactSecrets(rawError, this.core.env);
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
      const abs = resolve(this.core.layout.root, context.source_path);
      if (!realPathInside(abs, this.core.layout.domainsDir).ok)
        throw new HealerError(
          "invalid_report",
          `context.source_path ${JSON.stringify(context.source_path)} is refused: it is not a file of the domains directory`,
        );
      if (domain.infra.has(abs))
        throw new HealerError(
          "invalid_report",
          `context.source_path ${JSON.stringify(context.source_path)} is refused: a report cannot target an Infra contract`,
        );
      context.source_path = projectPath(this.core.layout.root, abs);
    }
    return { context, fqn, rawError };
  }

  /** Refuses a validation or compilation report from the wire that the domain does not fail with. */
  private checkClaim(report: ErrorReport, { context, fqn }: Reported, domain: WireDomain): void {
    const file = typeof context.source_path === "string" ? resolve(this.core.layout.root, context.source_path) : undefined;
    const key = file ?? fqn;
    const claimed =
      key !== null && key !== undefined
        ? domain.failures.has(`${key}\u0000${report.error}`)
        : [...domain.failures].some((f) => f.endsWith(`\u0000${report.error}`));
    if (!claimed)
      throw new HealerError(
        "invalid_report",
        `this ${report.source} report is refused: ${file ? `context.source_path ${JSON.stringify(context.source_path)}` : fqn ? `contract ${JSON.stringify(fqn)}` : "the domains directory"} does not fail validation with this error (the Healer validated it again)`,
      );
  }

  /** Validates a domain directory and files one ticket per error finding. */
  async scan(path: string = this.core.scanDir): Promise<{ check: CheckResult; tickets: IngestResult[] }> {
    const scanRoot = resolve(path);
    if (!existsSync(scanRoot)) throw new HealerError("invalid_report", `path not found: ${path}`);
    // Work of a killed run goes back to the queue first, so the obsolete check below sees it as it is.
    await this.core.recover();
    const check = checkDomain(scanRoot, { cache: this.core.parseCache });
    // A writer killed between its temporary file and the rename leaves the temporary behind.
    for (const dir of new Set(check.contracts.map((c) => dirname(resolve(c.file))))) removeStaleTemps(dir);
    const rel = projectPath(this.core.layout.root, scanRoot);
    const reports: ErrorReport[] = check.findings
      .filter((f) => f.severity === "error")
      .map((f) => ({
        source: f.code.startsWith("schema.") || f.code.startsWith("yaml.") || f.code.startsWith("file.") ? "validation" : "compilation",
        contract_fqn: f.fqn ?? null,
        error: f.message,
        context: {
          source_path: projectPath(this.core.layout.root, resolve(f.file)),
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
      for (const t of await this.core.store.list({ status })) {
        if ((t.source !== "validation" && t.source !== "compilation") || t.context.scan_root !== scanRoot) continue;
        if (live.has(`${t.context.source_path}\u0000${t.raw_error}`)) continue;
        if (t.proposal && this.core.onDisk(t.proposal)) continue;
        const note = "obsolete: a later scan no longer reports this error (fixed outside the Healer)";
        const closed = await this.core.store.transition(t.id, status, "rejected", { resolution_note: note });
        if (closed) this.core.emit("rejected", closed, note);
      }
    }
  }
}

/** What a report from the wire is read against (the domain's view). */
type WireDomain = { routes: readonly RouteEntry[]; infra: ReadonlySet<string>; failures: ReadonlySet<string> };

/** A report's text, context and contract as the ticket will keep them. */
interface Reported {
  context: TicketContext;
  fqn: string | null;
  rawError: string;
}

/** Refuses a `contract_fqn` that could address a file, or (from the wire) an Infra contract. */
function checkFqn(fqn: unknown, fromWire: boolean): void {
  if (typeof fqn !== "string") throw new HealerError("invalid_report", "contract_fqn must be a string");
  const why = unsafeFqnReason(fqn);
  if (why) throw new HealerError("invalid_report", `contract_fqn ${JSON.stringify(fqn)} is refused: it ${why}`);
  if (fromWire && fqn.toLowerCase().startsWith("infra/"))
    throw new HealerError("invalid_report", `contract_fqn ${JSON.stringify(fqn)} is refused: a report cannot target an Infra contract`);
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

/** A frame of the generated app's rule checks (`app/rules.py`) in a Python traceback. */
const RULE_FRAME = /File "[^"\n]*app\/rules\.py", line \d+, in (enforce|checked|plan)\b/;

function queuedMessage(t: Ticket): string {
  const kind = t.error_type || "unclassified error";
  return `${kind} (tier ${t.tier}, fixable by ${t.fixable_by}): ${t.raw_error.slice(0, 300)}`;
}
