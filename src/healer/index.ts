export type { ApplyResult, ProjectLayout, Regenerator } from "./apply.js";
export { applyProposal, projectLayout, regenerateAll } from "./apply.js";
export type { Classification, ClassifyInput } from "./classify.js";
export { classifyError, DATABASE_DRIFT, missingObjectOf, notFixableDiagnostic, TIER1_TYPES, TIER2_TYPES } from "./classify.js";
export type { Clock } from "./clock.js";
export { isoWithOffset, systemClock } from "./clock.js";
export { changeContractOf, DiffStore } from "./diff-store.js";
export type { HealerErrorCode } from "./errors.js";
export { HealerError } from "./errors.js";
export { fingerprintOf, normaliseMessage, normaliseRuntimeMessage } from "./fingerprint.js";
export type { LlmProposerOptions } from "./llm-proposer.js";
export { LlmProposer } from "./llm-proposer.js";
export type { HealerStatus } from "./metrics.js";
export { healerStatus } from "./metrics.js";
export type { NormaliseResult } from "./normalise.js";
export { normaliseContract, normaliseFqn, numberPrefixOf, screamingSnakeCase, snakeCase } from "./normalise.js";
export type { NotifierOptions, WebhookFormat } from "./notify.js";
export {
  chatText,
  consoleLine,
  Notifier,
  SIGNATURE_HEADER,
  signWebhook,
  stripControl,
  TIMESTAMP_HEADER,
  WEBHOOK_TIMEOUT_MS,
} from "./notify.js";
export { DATABASE_URL_VARIABLE, openTicketStore } from "./open-store.js";
export type { FixSummary, HealerOptions, RunSummary } from "./pipeline/index.js";
export { BUDGET_NOTE, Healer } from "./pipeline/index.js";
export type { Proposer, ProposerInput, ProposerResult } from "./proposer.js";
export { NO_PROVIDER_NOTE } from "./proposer.js";
export { REDACTED, redactContext, redactSecrets, redactStacktrace, redactText, redactValue } from "./redact.js";
export type { IngestResult, NewTicket, Outcomes, TicketFilter, TicketStore, TicketUpdate } from "./store.js";
export { MIN_PREFIX_LENGTH, ownerAlive, PROCESS_OWNER, redactUrl } from "./store.js";
export { LEASE_SECONDS, PostgresTicketStore } from "./store-postgres.js";
export { SqliteTicketStore } from "./store-sqlite.js";
export type {
  Change,
  ChangeContract,
  DiffFile,
  DiffRecord,
  ErrorReport,
  FileEdit,
  FixableBy,
  Notification,
  NotificationEvent,
  Priority,
  Proposal,
  ProposalMethod,
  Ticket,
  TicketContext,
  TicketSource,
  TicketStatus,
  Tier,
  Verification,
} from "./types.js";
export { OPEN_STATUSES, PRIORITIES, PRIORITY_ORDER, TERMINAL_STATUSES, TICKET_SOURCES, TICKET_STATUSES } from "./types.js";
