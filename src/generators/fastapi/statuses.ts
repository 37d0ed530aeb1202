import type { DomainIR, EndpointIR, Operation, WorkflowIR } from "../../compiler/ir.js";

/** What decides which failures an operation of a generated route can answer with. */
export interface StatusContext {
  ir: DomainIR;
  op: Operation;
  endpoint: EndpointIR | undefined;
  workflow: WorkflowIR | undefined;
}

/** One source of failure statuses: the statuses it adds to an operation, none when it does not apply. */
export type StatusSource = (ctx: StatusContext) => readonly number[];

const BODY_OPERATIONS: ReadonlySet<Operation> = new Set(["create", "update", "transition"]);
const RECORD_OPERATIONS: ReadonlySet<Operation> = new Set(["get", "update", "delete", "transition"]);

/**
 * Every status other than the success one that a generated operation can answer, each with the
 * error body every failure shares (app/errors.py `error_responses`). A feature that makes operations answer
 * a new status adds a source here (and, for hand-written routes such as app/auth/routes.py, lists
 * the status in their `responses=error_responses(...)`), so the document stays exact.
 */
export const STATUS_SOURCES: readonly StatusSource[] = [
  // Parameters, query and body fail validation; an unhandled error is reported and answers 500.
  () => [422, 500],
  ({ ir, endpoint }) => (ir.auth === null ? [] : endpoint && endpoint.roles.length > 0 ? [401, 403] : [401]),
  ({ op }) => (RECORD_OPERATIONS.has(op) ? [404] : []),
  // A body that is not JSON text (400), too large (413) or of another media type (415).
  ({ op }) => (BODY_OPERATIONS.has(op) ? [400, 413, 415] : []),
  // Unique and reference violations; a delete of a record others still reference; a concurrent move.
  ({ op }) => (op === "list" || op === "get" ? [] : [409]),
  // Idempotency-Key on creates: a key already used with another body (`idempotency_key_reused`).
  ({ op }) => (op === "create" ? [422] : []),
  // An invalid state move (400), a guard that does not hold (422).
  ({ op, workflow }) => (op === "transition" && workflow ? [400, 422] : []),
  ({ endpoint }) => (endpoint?.validation ?? []).map((r) => r.onFail.status),
];

/** The failure statuses of one operation, sorted. */
export function operationStatuses(ctx: StatusContext): number[] {
  return [...new Set(STATUS_SOURCES.flatMap((source) => source(ctx)))].sort((a, b) => a - b);
}
