import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import type { CheckResult } from "../../compiler/index.js";
import { checkDomain } from "../../compiler/index.js";
import type { LoadedContract } from "../../contracts/index.js";
import { ParseCache } from "../../contracts/index.js";
import { buildSchemaModel } from "../../generators/postgres/model.js";
import { CONFIGURE_HINT, selectProvider } from "../../llm/index.js";
import { type ProjectLayout, projectLayout, type Regenerator, regenerateAll } from "../apply/apply.js";
import { DiffStore } from "../apply/diff-store.js";
import { type Clock, isoWithOffset, systemClock } from "../clock.js";
import { Notifier } from "../notify/notify.js";
import { CallBudget, type CallBudgetLimits } from "../proposal/budget.js";
import { LlmProposer } from "../proposal/llm-proposer.js";
import { NO_PROVIDER_NOTE, type Proposer } from "../proposal/proposer.js";
import { consequenceLines } from "../proposal/risk.js";
import { openTicketStore } from "../store/open-store.js";
import type { TicketStore } from "../store/store.js";
import type { NotificationEvent, Proposal, Ticket, TicketContext } from "../types.js";

// The state every part of the Healer shares (store, notifier, proposer, budget, the domain as
// reports see it) and the helpers they all use. The parts (intake.ts, process.ts, review.ts) each
// receive this core; healer.ts wires them into the `Healer` that index.ts exports.

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
  /** Model-call budgets; default from `SVC_HEALER_LLM_CALLS_PER_MINUTE` and friends (proposal/budget.ts). */
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

export interface Outcome {
  ticket: Ticket;
  regenerated?: number;
  /** Put back in the queue to wait for the model-call budget. */
  deferred?: boolean;
}

export type RouteEntry = { basePath: string; entity: string; fqn: string | null };

interface DomainView {
  at: number;
  routes: readonly RouteEntry[];
  infra: ReadonlySet<string>;
  /** `table\u0000name` and `column\u0000name` of the generated schema; null when the domain does not compile. */
  names: Set<string> | null;
  /** The domain's error findings as `<absolute file>\u0000<message>` and `<fqn>\u0000<message>`: what a validation report may claim. */
  failures: ReadonlySet<string>;
  /** A hash of every contract's text and of the files that do not load (their findings): changes when any contract does. */
  contracts: string;
}

/** Settings, stores and helpers shared by the parts; `Healer` (healer.ts) is the class to use. */
export class HealerCore {
  readonly layout: ProjectLayout;
  readonly scanDir: string;
  readonly store: TicketStore;
  readonly notifier: Notifier;
  readonly diffs: DiffStore;
  readonly proposer: Proposer | null;
  /** Why there is no proposer, and what to set (shown in the failure note). */
  readonly noProposerReason: string;
  readonly clock: Clock;
  readonly regenerate: Regenerator;
  /** Aborted by `Healer.cancelPending`: LLM calls in flight end at once (the service stopping). */
  readonly stopping = new AbortController();
  readonly env: NodeJS.ProcessEnv;
  /** Model calls per minute (global and per fingerprint) and the cap on proposals awaiting a decision. */
  readonly budget: CallBudget;
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

  /** Waits for webhook deliveries in flight (bounded by their timeout) and closes the store. */
  async close(): Promise<void> {
    await this.notifier.flush();
    await this.store.close();
  }

  /** Requeues tickets of processes that died mid-way (see `TicketStore.recoverStale`). */
  async recover(): Promise<void> {
    await this.store.recoverStale();
  }

  /** Whether the ticket's contract file already holds the proposal's text. */
  onDisk(p: Proposal): boolean {
    try {
      return readFileSync(resolve(this.layout.root, p.file), "utf8") === p.after;
    } catch {
      return false;
    }
  }

  /**
   * Whether the generated schema has a table or column of this name: a missing one it has is
   * database drift, one it lacks is the generated code's own invention. An invalid domain cannot
   * tell, and counts as defining it (drift is the milder verdict: nothing gets blamed wrongly).
   */
  readonly defines = (kind: "table" | "column", name: string): boolean => this.view().names?.has(`${kind}\u0000${name}`) ?? true;

  /**
   * Where the ticket's domain is checked: the domains directory, or the directory a `healer fix
   * PATH` scan recorded, when that lies inside the project (the wire can no longer set one, and a
   * ticket stored before that could not lead anywhere else).
   */
  scanRootOf(t: Ticket): string {
    const recorded = t.context.scan_root;
    if (typeof recorded === "string") {
      const abs = resolve(this.layout.root, recorded);
      // Lexically inside: apply.ts checks the real path of every file it writes.
      const rel = relative(this.layout.root, abs);
      if (!rel.startsWith("..") && !isAbsolute(rel)) return abs;
    }
    return this.scanDir;
  }

  /**
   * Forgets the view: the Healer has just written contracts, and the next report must be read
   * against them (under `charter dev`, a fix is served within a second of the view of the broken
   * domain, whose routes are empty).
   */
  forgetView(): void {
    this.domainView = null;
  }

  /**
   * The domain as reports see it; routes are empty and names unknown while it does not compile.
   * Reused for up to `maxAgeMs` (a burst of runtime reports checks the domain once).
   */
  view(maxAgeMs = 1000): DomainView {
    const now = Date.now();
    if (this.domainView && now - this.domainView.at < maxAgeMs) return this.domainView;
    let routes: RouteEntry[] = [];
    let infra = new Set<string>();
    let names: Set<string> | null = null;
    const failures = new Set<string>();
    const contracts = createHash("sha256");
    try {
      const check = existsSync(this.scanDir) ? checkDomain(this.scanDir, { cache: this.parseCache }) : undefined;
      // Paths relative to the project: replicas (pods) hold the same contracts at different roots,
      // and a repeat of a failed error at the other replica must not count as a change.
      const rel = (path: string): string => relative(this.layout.root, resolve(path));
      for (const c of [...(check?.loaded ?? [])].sort((a, b) => a.absPath.localeCompare(b.absPath)))
        contracts.update(`${rel(c.absPath)}\u0000${c.source}\u0000`);
      for (const f of check?.findings ?? []) {
        if (f.severity !== "error") continue;
        contracts.update(`${rel(f.file)}\u0000${f.message}\u0000`);
        failures.add(`${resolve(f.file)}\u0000${f.message}`);
        if (f.fqn) failures.add(`${f.fqn}\u0000${f.message}`);
      }
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
    this.domainView = { at: now, routes, infra, names, failures, contracts: contracts.digest("hex").slice(0, 32) };
    return this.domainView;
  }

  /**
   * What an attempt at a ticket runs with, as two hashes: the model with its settings (none without
   * a proposer), and the contracts. Stored with each attempt; a failed ticket is asked again only
   * when a repeat of its error finds either changed (ticket-table.ts `upsertSetSql`).
   */
  attemptKeys(maxAgeMs?: number): { attempt_model: string; attempt_contracts: string } {
    const model = this.proposer ? (this.proposer.settings ?? this.proposer.name) : "none";
    return {
      attempt_model: createHash("sha256").update(model).digest("hex").slice(0, 32),
      attempt_contracts: this.view(maxAgeMs).contracts,
    };
  }

  /** The ticket's contract: by its source path when known, else by FQN. */
  contractOf(t: Ticket, check: CheckResult): LoadedContract | undefined {
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

  viewUrl(id: string): string {
    const base =
      this.env.SVC_HEALER_PUBLIC_URL?.replace(/\/+$/, "") || this.publicUrl || `http://localhost:${this.env.SVC_HEALER_PORT || "8083"}`;
    return `${base}/healer/tickets/${id}/view`;
  }

  emit(event: NotificationEvent, t: Ticket, message: string): void {
    const risk = event === "proposed" ? (t.proposal?.risk ?? []) : [];
    this.notifier.notify({
      timestamp: isoWithOffset(this.clock()),
      event,
      ticket_id: t.id,
      contract_fqn: t.contract_fqn ?? "",
      status: t.status,
      tier: t.tier,
      priority: t.priority,
      message: risk.length ? `${message}; approving it: ${consequenceLines(risk).join("; ")}` : message,
      ...(risk.length ? { consequences: consequenceLines(risk) } : {}),
    });
  }
}

/** The finding code and schema path a report carries in its context, for classification. */
export function findingOf(context: TicketContext): { code?: string; schemaPath?: string } {
  return {
    ...(typeof context.code === "string" ? { code: context.code } : {}),
    ...(typeof context.schema_path === "string" ? { schemaPath: context.schema_path } : {}),
  };
}

export function fqnOfLoaded(c: LoadedContract): string | null {
  const meta = c.data.metadata as Record<string, unknown> | undefined;
  if (typeof c.data.kind !== "string" || typeof meta?.name !== "string" || typeof meta.domain !== "string") return null;
  return `${c.data.kind.toLowerCase()}/${meta.domain}/${meta.name}`;
}
