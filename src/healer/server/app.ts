import { timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import formbody from "@fastify/formbody";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { HealerError } from "../errors.js";
import { readLive } from "../live.js";
import type { Healer } from "../pipeline.js";
import type { IngestResult } from "../store.js";
import type { ErrorReport, Priority, Ticket, TicketStatus } from "../types.js";
import { indexPage, ticketPage } from "./pages.js";
import { idParams, ingestBody, rejectBody, ticketsQuery } from "./schemas.js";

/** Largest request body accepted (a report with a long stack trace fits easily). */
export const DEFAULT_BODY_LIMIT = 256 * 1024;

export interface HealerServerOptions {
  healer: Healer;
  /** `SVC_HEALER_TOKEN`: when set, every POST needs `Authorization: Bearer <token>` (forms: a `token` field). */
  token?: string | undefined;
  bodyLimit?: number;
  /** Fastify's request log (off by default; `healer serve` turns it on). */
  logger?: boolean;
}

/**
 * The Healer service (SPEC.md "Endpoints / Healer service"). Bodies and query strings are checked
 * by JSON Schema before a handler runs, so a bad request is a 400 with the reason, never a 500.
 * Auth (DESIGN.md): with `SVC_HEALER_TOKEN` every POST needs it; without it approve and reject
 * are accepted only from loopback, since they rewrite contracts, while ingest stays open to the
 * apps that report.
 */
export function buildHealerServer(options: HealerServerOptions): FastifyInstance {
  const { healer } = options;
  const token = options.token?.trim() || undefined;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: "array", allErrors: false } },
  });

  // POSTs without a body but with a JSON content type (approve from curl -H ...) are not an error.
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(httpError(400, "invalid_json", `request body is not valid JSON: ${(e as Error).message}`), undefined);
    }
  });
  void app.register(formbody, { bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT });

  app.setErrorHandler((error: Error & { statusCode?: number; validation?: unknown; code?: string }, request, reply) => {
    if (error instanceof HealerError) return sendHealerError(reply, error);
    if (error.validation) return reply.code(400).send({ error: "bad_request", message: error.message });
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error(error);
      return reply.code(500).send({ error: "internal_error", message: "internal error; see the Healer's log" });
    }
    const name = status === 413 ? "payload_too_large" : status === 415 ? "unsupported_media_type" : (error.code ?? "bad_request");
    return reply.code(status).send({ error: name === "invalid_json" ? "bad_request" : name, message: error.message });
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: "not_found", message: `no route ${request.method} ${request.url}` });
  });

  app.addHook("onRequest", async (request, reply) => {
    if (request.method !== "POST") return;
    const guarded = /^\/healer\/(approve|reject)\//.test(request.url);
    if (token) {
      // Form actions carry the token as a field; their check runs after the body is parsed.
      if (request.url.endsWith("/action")) return;
      if (!bearerMatches(request, token)) return denyToken(reply);
      return;
    }
    if (guarded && !isLoopback(request.socket.remoteAddress)) {
      return reply.code(403).send({
        error: "forbidden",
        message: "approve and reject are accepted only from this machine unless SVC_HEALER_TOKEN is set",
      });
    }
  });

  app.get("/", async (_req, reply) => reply.redirect("/healer", 303));
  app.get("/healer/health", async () => ({ status: "ok", service: "healer" }));
  app.get("/healer/status", async () => healer.status());

  const ingest = groupCommit(healer);
  app.post("/healer/ingest", { schema: { body: ingestBody } }, async (request) => {
    const { ticket, created } = await ingest(request.body as ErrorReport);
    const now = created ? await healer.processTicket(ticket.id) : ticket;
    return { ticket_id: now.id, status: now.status, created, occurrences: now.occurrences };
  });

  // Minimal owner-only scan for `charter dev` (issue 29 item 2): worktree trust adds the real auth
  // guard; until that merges, the onRequest hook's token check (or loopback) protects it.
  app.post("/healer/scan", async (request, reply) => {
    if (!token && !isLoopback(request.socket.remoteAddress)) {
      return reply
        .code(403)
        .send({ error: "forbidden", message: "scan is accepted only from this machine unless SVC_HEALER_TOKEN is set" });
    }
    const { check, tickets } = await healer.scan();
    await healer.processQueue();
    const now = await Promise.all(tickets.map(async (r) => ({ r, t: (await healer.store.get(r.ticket.id)) ?? r.ticket })));
    return { tickets: now.map(({ r, t }) => ({ ticket_id: t.id, status: t.status, created: r.created })), errors: check.errors };
  });

  app.get("/healer/tickets", { schema: { querystring: ticketsQuery } }, async (request) => {
    const q = request.query as { status?: TicketStatus; priority?: Priority; contract_fqn?: string; limit?: number };
    return healer.store.list({ status: q.status, priority: q.priority, contract_fqn: q.contract_fqn }, q.limit ?? 1000);
  });

  app.get("/healer/tickets/:ticket_id", { schema: { params: idParams } }, async (request) => {
    return healer.store.resolve((request.params as { ticket_id: string }).ticket_id);
  });

  app.get("/healer/tickets/:ticket_id/view", { schema: { params: idParams } }, async (request, reply) => {
    const t = await healer.store.resolve((request.params as { ticket_id: string }).ticket_id);
    const done = (request.query as { done?: string }).done;
    const flash = done ? flashOf(done, t.status, t.resolution_note) : undefined;
    const liveSince = t.diff_id ? readLive(join(healer.layout.root, ".forge")).diffs[t.diff_id] : undefined;
    return sendPage(reply, ticketPage(t, { tokenRequired: token !== undefined, flash, liveSince }));
  });

  app.get("/healer", async (_request, reply) => {
    const [tickets, status] = await Promise.all([healer.store.list({}, 500), healer.status()]);
    return sendPage(reply, indexPage(tickets, status));
  });

  app.post("/healer/approve/:ticket_id", { schema: { params: idParams } }, async (request) => {
    const t = await requireProposed(healer, (request.params as { ticket_id: string }).ticket_id, "approved");
    const done = await healer.approve(t.id);
    // SPEC.md answers `approved`; the apply runs at once, so its outcome comes with it.
    return { ticket_id: done.id, status: "approved", outcome: done.status, resolution_note: done.resolution_note };
  });

  app.post("/healer/reject/:ticket_id", { schema: { params: idParams, body: rejectBody } }, async (request) => {
    const t = await requireProposed(healer, (request.params as { ticket_id: string }).ticket_id, "rejected");
    const reason = (request.body as { reason?: string } | undefined)?.reason ?? "";
    const done = await healer.reject(t.id, reason);
    return { ticket_id: done.id, status: done.status };
  });

  // Post/Redirect/Get: a form action always ends in a 303 to the view page, with what happened.
  app.post("/healer/approve/:ticket_id/action", { schema: { params: idParams } }, async (request, reply) => {
    const id = (request.params as { ticket_id: string }).ticket_id;
    const form = (request.body ?? {}) as { token?: string };
    if (!formAllowed(request, reply, token, form.token)) return reply;
    const t = await healer.store.resolve(id);
    let done = "not-proposed";
    if (t.status === "proposed") done = (await healer.approve(t.id)).status;
    return reply.redirect(`/healer/tickets/${t.id}/view?done=${done}`, 303);
  });

  app.post("/healer/reject/:ticket_id/action", { schema: { params: idParams } }, async (request, reply) => {
    const id = (request.params as { ticket_id: string }).ticket_id;
    const form = (request.body ?? {}) as { token?: string; reason?: string };
    if (!formAllowed(request, reply, token, form.token)) return reply;
    const t = await healer.store.resolve(id);
    let done = "not-proposed";
    if (t.status === "proposed") done = (await healer.reject(t.id, String(form.reason ?? "").slice(0, 2000))).status;
    return reply.redirect(`/healer/tickets/${t.id}/view?done=${done}`, 303);
  });

  return app;
}

/**
 * Group commit: reports that arrive while the event loop is busy, or while the previous batch is
 * being stored, are stored together in one transaction, and each request is answered once its
 * report is committed. Under load this turns many small commits into a few larger ones (the
 * store's cost is per commit, not per row); a lone report waits one turn of the loop.
 */
function groupCommit(healer: Healer): (report: ErrorReport) => Promise<IngestResult> {
  type Waiter = { report: ErrorReport; resolve: (r: IngestResult) => void; reject: (e: Error) => void };
  let queue: Waiter[] = [];
  let storing = false;
  const flush = async (): Promise<void> => {
    storing = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      let results: Awaited<ReturnType<Healer["reportBatch"]>>;
      try {
        results = await healer.reportBatch(batch.map((w) => w.report));
      } catch (e) {
        for (const w of batch) w.reject(e as Error);
        continue;
      }
      batch.forEach((w, i) => {
        const r = results[i] as (typeof results)[number];
        if ("error" in r) w.reject(r.error);
        else w.resolve(r);
      });
    }
    storing = false;
  };
  return (report) =>
    new Promise((resolve, reject) => {
      if (queue.length === 0 && !storing) setImmediate(() => void flush());
      queue.push({ report, resolve, reject });
    });
}

async function requireProposed(healer: Healer, id: string, action: string): Promise<Ticket> {
  const t = await healer.store.resolve(id);
  if (t.status !== "proposed") {
    throw new HealerError("invalid_state", `ticket ${t.id} is ${t.status}; only a proposed ticket can be ${action}`);
  }
  return t;
}

function sendHealerError(reply: FastifyReply, e: HealerError): FastifyReply {
  const status = e.code === "not_found" || e.code === "invalid_id" ? 404 : 400;
  return reply.code(status).send({ error: status === 404 ? "not_found" : e.code, message: e.message });
}

function sendPage(reply: FastifyReply, page: string): FastifyReply {
  return reply
    .type("text/html; charset=utf-8")
    .header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
    .header("x-content-type-options", "nosniff")
    .send(page);
}

function flashOf(done: string, status: string, note: string): string {
  if (done === "not-proposed") return `Nothing done: the ticket is ${status}, not proposed.`;
  if (done === "applied") return "Approved: the fix was applied and the code regenerated.";
  if (done === "failed") return `Approved, but applying failed: ${note}`;
  if (done === "rejected") return "Rejected.";
  return `Done: ${status}.`;
}

/**
 * Forms: the token field when a token is set; otherwise loopback only, and (against cross-site
 * form posts from another page in the same browser) an Origin, when sent, must be this host.
 */
function formAllowed(request: FastifyRequest, reply: FastifyReply, token: string | undefined, given: string | undefined): boolean {
  if (token) {
    if ((given !== undefined && safeEqual(given, token)) || bearerMatches(request, token)) return true;
    denyToken(reply);
    return false;
  }
  const origin = request.headers.origin;
  if (origin && origin !== "null") {
    let host = "";
    try {
      host = new URL(origin).host;
    } catch {
      host = "";
    }
    if (host !== request.headers.host) {
      void reply.code(403).send({ error: "forbidden", message: `cross-origin form post from ${origin} refused` });
      return false;
    }
  }
  return true;
}

function bearerMatches(request: FastifyRequest, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? "");
  return m !== null && safeEqual((m[1] as string).trim(), token);
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function denyToken(reply: FastifyReply): void {
  void reply
    .code(401)
    .header("www-authenticate", 'Bearer realm="charter-healer"')
    .send({ error: "unauthorized", message: "this Healer requires its token (SVC_HEALER_TOKEN) as a bearer token" });
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

function httpError(statusCode: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { statusCode, code });
}
