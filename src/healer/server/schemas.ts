import { PRIORITIES, TICKET_SOURCES, TICKET_STATUSES } from "../types.js";

/**
 * JSON Schemas of the service's requests. Fastify compiles them with Ajv and checks every request
 * before its handler runs; a mismatch is a 400 naming the field.
 */

/** SPEC.md "Ingest request body". Unknown fields are allowed (apps may send more) and ignored. */
export const ingestBody = {
  type: "object",
  required: ["source", "error"],
  properties: {
    source: { type: "string", enum: [...TICKET_SOURCES] },
    contract_fqn: { type: ["string", "null"], maxLength: 256 },
    error: { type: "string", minLength: 1, maxLength: 65_536 },
    stacktrace: { type: ["string", "null"], maxLength: 131_072 },
    context: {
      type: "object",
      properties: {
        path: { type: "string" },
        request_path: { type: "string" },
        method: { type: "string" },
        status_code: { type: "integer", minimum: 100, maximum: 599 },
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
