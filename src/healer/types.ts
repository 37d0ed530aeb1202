import type { Plan } from "../plan/plan.js";
import type { RiskFinding } from "./proposal/risk.js";

/**
 * The Healer's records: tickets, their states and transitions, events. Field names
 * are the wire names of the ticket object, so the CLI's JSON output and the HTTP service (a later
 * issue) serialise a `Ticket` as it is.
 */

export const TICKET_SOURCES = ["validation", "compilation", "runtime", "manual"] as const;
export type TicketSource = (typeof TICKET_SOURCES)[number];

export const TICKET_STATUSES = ["queued", "analyzing", "proposed", "approved", "applied", "failed", "rejected"] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/**
 * A ticket in one of these states is "open": being worked on or awaiting a decision. Reports with its
 * fingerprint add to a ticket in any state; a closed one may be reopened (store/store.ts `ingest`).
 */
export const OPEN_STATUSES: readonly TicketStatus[] = ["queued", "analyzing", "proposed", "approved"];
export const TERMINAL_STATUSES: readonly TicketStatus[] = ["applied", "failed", "rejected"];

export const PRIORITIES = ["critical", "high", "medium", "low"] as const;
export type Priority = (typeof PRIORITIES)[number];
/** `priority_order`, the queue's sort key: critical 0 ... low 3. */
export const PRIORITY_ORDER: Record<Priority, number> = { critical: 0, high: 1, medium: 2, low: 3 };

export type Tier = 0 | 1 | 2 | 3;

/** Who can fix an error: a contract change, or nobody the Healer can help (contract, generator or data). */
export type FixableBy = "contract" | "generator" | "data";

export type ProposalMethod = "deterministic" | "llm_structural" | "llm_runtime" | "llm";

/**
 * One change of a proposal: a JSON Patch operation (RFC 6902) on the contract's data, plus the
 * value it replaces (`before`). A key rename is a `move` from the old key to the new one.
 */
export interface Change {
  op: "add" | "remove" | "replace" | "move";
  /** JSON Pointer into the contract document. */
  path: string;
  value?: unknown;
  before?: unknown;
  /** Source pointer of a `move`. */
  from?: string;
  /** Project-relative file the change belongs to, when it is not the ticket's own contract. */
  file?: string;
  /** Why this change was made, in a few words (shown by `healer show`). */
  reason?: string;
}

/** A file a proposal rewrites: its full text before and after. */
export interface FileEdit {
  /** Path relative to the project root, POSIX separators. */
  file: string;
  fqn: string | null;
  before: string;
  after: string;
  changes: Change[];
}

export interface Proposal {
  contract_fqn: string | null;
  /** The ticket's own contract file (project-relative) and its text before and after. */
  file: string;
  before: string;
  after: string;
  changes: Change[];
  /** Other contracts updated with it (references to a renamed contract, say). */
  related: FileEdit[];
  explanation: string;
  confidence: number;
  method: ProposalMethod;
  created_at: string;
  /** LLM calls it took (tier 2/3). */
  attempts?: number;
  /** The proposal regenerated in a scratch directory before anyone approves it. */
  verification?: Verification;
  /**
   * What approving does, most severe first: the plan's facts (consequences.ts: dropped columns
   * with their rows, breaking API changes) and the contract risk review's findings (proposal/risk.ts). A
   * `destroys data`, `breaks clients` or `weakens` finding must be confirmed by name before the
   * proposal may be approved.
   */
  risk?: RiskFinding[];
  /** The regeneration approving causes, judged by the engine of `charter plan`. */
  plan?: ProposalPlan;
}

/** Whether a proposal, applied to a copy of the domain, validates and generates every target. */
export interface Verification {
  validates: boolean;
  /** The first error findings of the copy, when it does not validate. */
  errors: string[];
  generates: boolean;
  targets: { target: string; ok: boolean; files: number; error?: string }[];
  ms: number;
}

export interface Ticket {
  id: string;
  source: TicketSource;
  contract_fqn: string | null;
  error_type: string;
  raw_error: string;
  context: TicketContext;
  status: TicketStatus;
  tier: Tier;
  priority: Priority;
  priority_order: number;
  fixable_by: FixableBy;
  proposal: Proposal | null;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  resolution_note: string;
  /** Dedup key: contract, error type and normalised message (see fingerprint.ts). */
  fingerprint: string;
  /** Reports folded into this ticket, the first one included. */
  occurrences: number;
  last_seen_at: string;
  /** Diff record written when the fix was applied. */
  diff_id: string | null;
  /** The `X-Request-ID` and trace id of the latest failed request a runtime report named. */
  request_id: string | null;
  trace_id: string | null;
  /**
   * When the error last came back after its fix was applied (Sentry's regression): the ticket was
   * reopened (`queued` again, a note saying so) rather than a new one opened. Null: never.
   */
  regressed_at: string | null;
}

/**
 * What a report carries (stacktrace, request path, method, status code, schema path, source path),
 * plus where a validation finding sits, so the Healer can tell later whether it is gone.
 */
export interface TicketContext {
  stacktrace?: string | null;
  path?: string;
  request_path?: string;
  method?: string;
  status_code?: number;
  schema_path?: string;
  /** Contract file, relative to the project root. */
  source_path?: string;
  /** JSON Pointer of the finding inside the contract. */
  pointer?: string;
  /** Finding code (`schema.pattern`, `ref.unresolved`, ...). */
  code?: string;
  line?: number;
  column?: number;
  /** Domain directory the finding came from, relative to the project root. */
  scan_root?: string;
  [key: string]: unknown;
}

/** An error report: the body of `POST /healer/ingest`, and what `healer fix` makes of each finding. */
/** A reporter's report id (`ErrorReport.report_id`): the ingest schema's pattern, and what intake keeps. */
export const REPORT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{7,63}$/;

export interface ErrorReport {
  source: TicketSource;
  contract_fqn?: string | null;
  error: string;
  stacktrace?: string | null;
  context?: TicketContext;
  /**
   * The reporter's id of this report, the same when it sends the report again (the generated app
   * retries a report whose answer timed out, though the Healer may have stored it): a report whose
   * id the store has seen is not counted twice.
   */
  report_id?: string | null;
}

export type NotificationEvent = "queued" | "proposed" | "applied" | "failed" | "rejected";

/** The payload of every notification channel, field for field. */
export interface Notification {
  timestamp: string;
  event: NotificationEvent;
  ticket_id: string;
  contract_fqn: string;
  status: TicketStatus;
  tier: number;
  priority: Priority;
  message: string;
  /** A proposal's consequences (risk.ts `consequenceLines`), the same list the review page leads with. */
  consequences?: string[];
}

/** A diff record under `.forge/diffs/`: one per applied fix. */
export interface DiffRecord {
  id: string;
  ticket_id: string;
  timestamp: string;
  origin: "HEALER";
  reason: string;
  contract_fqn: string | null;
  method: ProposalMethod;
  /** `deferred` while other errors kept the domain from compiling; a later full regeneration marks it `done`. */
  regeneration: "done" | "deferred" | "failed";
  files: DiffFile[];
  change_contract: ChangeContract;
}

export interface DiffFile {
  file: string;
  fqn: string | null;
  before: string;
  after: string;
  /** Unified diff of before -> after. */
  diff: string;
  changes: Change[];
}

/** What a change means for users of the generated app, and how to check it. */
export interface ChangeContract {
  compatibility: "compatible" | "breaking";
  migration_risk: "none" | "low" | "medium" | "high";
  affected_surfaces: string[];
  verification: string[];
}

/**
 * A proposal judged by the engine of `charter plan`: the files regenerating would add, change and
 * remove, the migration with its destructive steps and the rows they touch, the API's changes.
 * Stored with the ticket; `consequencesOf` turns it into lines of the consequences list.
 */
export interface ProposalPlan {
  /**
   * What the proposal was compared with: the generated app on disk (`runtime`, what approving
   * regenerates), or, before anything was generated, the output of the contracts as they are.
   */
  compared_with: "runtime" | "contracts";
  /** The plan, paths project-relative; null when it could not be made (`error` says why). */
  plan: Plan | null;
  error?: string;
  /** Why the rows of the destructive steps were not counted; absent when they were. */
  rows_unknown?: string;
  /** The text of the migration regenerating would add (shown on the review page). */
  migration_sql?: string;
}
