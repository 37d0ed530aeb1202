export type { ApplyResult, ProjectLayout, Regenerator } from "./apply/apply.js";
export { applyProposal, projectLayout, regenerateAll } from "./apply/apply.js";
export { changeContractOf, DiffStore } from "./apply/diff-store.js";
export type { Clock } from "./clock.js";
export { isoWithOffset, systemClock } from "./clock.js";
export type { HealerErrorCode } from "./errors.js";
export { HealerError } from "./errors.js";
export type { Classification, ClassifyInput } from "./intake/classify.js";
export { classifyError, DATABASE_DRIFT, missingObjectOf, notFixableDiagnostic, TIER1_TYPES, TIER2_TYPES } from "./intake/classify.js";
export { fingerprintOf, normaliseMessage, normaliseRuntimeMessage } from "./intake/fingerprint.js";
export { REDACTED, redactContext, redactSecrets, redactStacktrace, redactText, redactValue } from "./intake/redact.js";
export type { HealerStatus } from "./notify/metrics.js";
export { healerStatus } from "./notify/metrics.js";
export type { NotifierOptions, WebhookFormat } from "./notify/notify.js";
export {
  chatText,
  consoleLine,
  Notifier,
  SIGNATURE_HEADER,
  signWebhook,
  stripControl,
  TIMESTAMP_HEADER,
  WEBHOOK_TIMEOUT_MS,
} from "./notify/notify.js";
export type { FixSummary, HealerOptions, RunSummary } from "./pipeline/index.js";
export { BUDGET_NOTE, Healer } from "./pipeline/index.js";
export type { LlmProposerOptions } from "./proposal/llm-proposer.js";
export { LlmProposer } from "./proposal/llm-proposer.js";
export type { NormaliseResult } from "./proposal/normalise.js";
export { normaliseContract, normaliseFqn, numberPrefixOf, screamingSnakeCase, snakeCase } from "./proposal/normalise.js";
export type { Proposer, ProposerInput, ProposerResult } from "./proposal/proposer.js";
export { NO_PROVIDER_NOTE } from "./proposal/proposer.js";
export { DATABASE_URL_VARIABLE, openTicketStore } from "./store/open-store.js";
export type { IngestResult, NewTicket, Outcomes, TicketFilter, TicketStore, TicketUpdate } from "./store/store.js";
export { MIN_PREFIX_LENGTH, ownerAlive, PROCESS_OWNER, redactUrl } from "./store/store.js";
export { LEASE_SECONDS, PostgresTicketStore } from "./store/store-postgres.js";
export { SqliteTicketStore } from "./store/store-sqlite.js";
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
