import { PRIORITIES, REPORT_ID, TICKET_SOURCES, TICKET_STATUSES } from "../types.js";

/**
 * JSON Schemas of the service's requests. Fastify compiles them with Ajv and checks every request
 * before its handler runs; a mismatch is a 400 naming the field.
 */

/**
 * The ingest request body, and nothing more: the reporter is untrusted (docs/threat-model.md),
 * so an unknown field is a 400 naming it rather than something a later step might
 * read. No path or scan root comes from the wire; `source_path` (validation reports) is checked
 * against the domains directory by the pipeline, and `route_fqn` is replaced by the Healer's own
 * path mapping.
 */
export const ingestBody = {
  type: "object",
  required: ["source", "error"],
  additionalProperties: false,
  properties: {
    source: { type: "string", enum: [...TICKET_SOURCES] },
    contract_fqn: { type: ["string", "null"], maxLength: 256 },
    error: { type: "string", minLength: 1, maxLength: 65_536 },
    stacktrace: { type: ["string", "null"], maxLength: 131_072 },
    // The reporter's id of this report, kept when it sends it again (types.ts `ErrorReport`).
    report_id: { type: "string", pattern: REPORT_ID.source },
    context: {
      type: "object",
      additionalProperties: false,
      properties: {
        path: { type: "string", maxLength: 2048 },
        request_path: { type: "string", maxLength: 2048 },
        method: { type: "string", maxLength: 16 },
        status_code: { type: "integer", minimum: 100, maximum: 599 },
        stacktrace: { type: ["string", "null"], maxLength: 131_072 },
        route_fqn: { type: ["string", "null"], maxLength: 256 },
        source_path: { type: "string", maxLength: 1024 },
        pointer: { type: "string", maxLength: 1024 },
        code: { type: "string", maxLength: 128 },
        schema_path: { type: "string", maxLength: 1024 },
        line: { type: "integer", minimum: 0 },
        column: { type: "integer", minimum: 0 },
        // The failed request's X-Request-ID and trace id (the generated app/observability.py).
        request_id: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$" },
        trace_id: { type: "string", pattern: "^[0-9a-f]{32}$" },
      },
    },
  },
} as const;

export const rejectBody = {
  type: ["object", "null"],
  properties: { reason: { type: "string", maxLength: 2000 } },
} as const;

export const ticketsQuery = {
  type: "object",
  properties: {
    status: { type: "string", enum: [...TICKET_STATUSES] },
    priority: { type: "string", enum: [...PRIORITIES] },
    contract_fqn: { type: "string" },
    limit: { type: "integer", minimum: 1, maximum: 10_000 },
  },
} as const;

export const idParams = {
  type: "object",
  required: ["ticket_id"],
  properties: { ticket_id: { type: "string", minLength: 1, maxLength: 64 } },
} as const;

/** Writes (approve, reject) name a ticket by its full id: prefixes are for reads and the CLI. */
export const fullIdParams = {
  type: "object",
  required: ["ticket_id"],
  properties: {
    ticket_id: { type: "string", pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$" },
  },
} as const;

export const loginBody = {
  type: "object",
  required: ["token"],
  properties: { token: { type: "string", maxLength: 1024 }, next: { type: "string", maxLength: 2048 } },
} as const;
