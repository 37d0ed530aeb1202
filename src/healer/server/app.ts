import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { isIP } from "node:net";
import { join } from "node:path";
import formbody from "@fastify/formbody";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { readLive } from "../apply/live.js";
import { HealerError } from "../errors.js";
import { redactValue } from "../intake/redact.js";
import { serviceMetrics } from "../notify/prom.js";
import type { Healer } from "../pipeline/index.js";
import { unacceptedRisk } from "../proposal/risk.js";
import type { IngestResult } from "../store/store.js";
import type { ErrorReport, Priority, Ticket, TicketStatus } from "../types.js";
import { indexPage, loginPage, ticketPage } from "./pages.js";
import { fullIdParams, idParams, ingestBody, loginBody, rejectBody, ticketsQuery } from "./schemas.js";
import { traceUrl } from "./trace-link.js";

/** Largest request body accepted (a report with a long stack trace fits easily). */
export const DEFAULT_BODY_LIMIT = 256 * 1024;
/** A request whose headers and body have not fully arrived by then is answered 408 and closed. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
/** Deepest JSON nesting accepted: a report is two levels deep; this leaves room and no more. */
export const MAX_JSON_DEPTH = 8;
/** How long a view-page session lasts after the token login. */
const SESSION_SECONDS = 12 * 3600;
const SESSION_COOKIE = "charter_healer_session";
/** Failed token sign-ins one client address may make per window before it is answered 429. */
const LOGIN_FAILURES_PER_WINDOW = 10;
const LOGIN_WINDOW_MS = 60_000;

export interface HealerServerOptions {
  healer: Healer;
  /** `SVC_HEALER_TOKEN`: when set, every POST and every read of ticket content needs it (docs/threat-model.md). */
  token?: string | undefined;
  bodyLimit?: number;
  bodyTimeoutMs?: number;
  /** The address it listens on (`--host`): a name the Host header may carry besides the loopback names. */
  host?: string | undefined;
  /** `SVC_HEALER_PUBLIC_URL`: the other address browsers reach it by (its host joins the Host allow-list). */
  publicUrl?: string | undefined;
  /** Fastify's request log (off by default; `healer serve` turns it on). */
  logger?: boolean;
}

/**
 * Who may call a route, keyed by the route the router matched (method and pattern), never by the
 * raw URL: `/healer/%61pprove/...` and `...?/action` are the routes they decode to. A route missing
 * here is treated as an owner write, so a new route is locked until someone says otherwise.
 * - public: anyone (health, counts);
 * - ingest: the reporting app (the bearer token when one is set);
 * - read: ticket content, the owner's;
 * - write: JSON decisions and the scan, the owner's;
 * - form: the view page's decisions (a browser: session cookie plus CSRF field, or same-origin);
 * - login: the token login form.
 */
type Access = "public" | "ingest" | "read" | "write" | "form" | "login";
const ACCESS: Record<string, Access> = {
  "GET /": "public",
  "GET /healer/health": "public",
  "GET /healer/status": "public",
  "GET /metrics": "public",
  "GET /healer/login": "login",
  "POST /healer/login": "login",
  "POST /healer/ingest": "ingest",
  "GET /healer": "read",
  "GET /healer/tickets": "read",
  "GET /healer/tickets/:ticket_id": "read",
  "GET /healer/tickets/:ticket_id/view": "read",
  "POST /healer/approve/:ticket_id": "write",
  "POST /healer/reject/:ticket_id": "write",
  "POST /healer/scan": "write",
  "POST /healer/approve/:ticket_id/action": "form",
  "POST /healer/reject/:ticket_id/action": "form",
  "POST /healer/retry/:ticket_id": "write",
  "POST /healer/retry/:ticket_id/action": "form",
};

declare module "fastify" {
  interface FastifyRequest {
    /** The session id when a form action is allowed by its session cookie (its CSRF field is checked next). */
    healerSession?: string;
  }
}

/**
 * The Healer service (`charter healer serve`). Bodies and query strings are checked
 * by JSON Schema before a handler runs, so a bad request is a 400 with the reason, never a 500.
 * Who may do what is decided once per request, in `decide`, from the matched route (see
 * docs/threat-model.md).
 */
export function buildHealerServer(options: HealerServerOptions): FastifyInstance {
  const { healer } = options;
  const token = options.token?.trim() || undefined;
  const publicUrl = parseUrl(options.publicUrl ?? healer.env.SVC_HEALER_PUBLIC_URL);
  const sessions = token ? new Sessions(token) : undefined;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: "array", allErrors: false } },
    // Node's own request timeout answers 408 to a body that trickles in; its check runs every
    // second here (the default, 30 s, would let a slow body hold a connection much longer).
    serverFactory: (handler) =>
      createServer(
        { requestTimeout: bodyTimeoutMs, headersTimeout: Math.min(bodyTimeoutMs, 60_000), connectionsCheckingInterval: 1000 },
        handler,
      ),
  });

  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = String(body);
    // POSTs without a body but with a JSON content type (approve from curl -H ...) are not an error.
    if (text.trim() === "") return done(null, undefined);
    if (jsonDepth(text) > MAX_JSON_DEPTH)
      return done(httpError(400, "bad_request", `request body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return done(httpError(400, "bad_request", `request body is not valid JSON: ${(e as Error).message}`), undefined);
    }
    const nul = nulAt(value, "");
    if (nul !== null) return done(httpError(400, "bad_request", `request body holds a NUL character at ${nul || "/"}`), undefined);
    done(null, value);
  });
  void app.register(formbody, { bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT });

  app.setErrorHandler((error: Error & { statusCode?: number; validation?: unknown; code?: string }, request, reply) => {
    if (error instanceof HealerError) return sendHealerError(reply, error);
    if (error.validation) return reply.code(400).send({ error: "bad_request", message: validationMessage(error) });
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error(error);
      return reply.code(500).send({ error: "internal_error", message: "internal error; see the Healer's log" });
    }
    const name = status === 413 ? "payload_too_large" : status === 415 ? "unsupported_media_type" : (error.code ?? "bad_request");
    return reply.code(status).send({ error: name.startsWith("FST_") ? "bad_request" : name, message: error.message });
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: "not_found", message: `no route ${request.method} ${request.url}` });
  });

  app.addHook("onRequest", async (request, reply) => {
    const denial = decide(request, { token, sessions, publicUrl, host: options.host });
    if (denial) return deny(reply, denial);
  });
  // The one part of the decision that needs the body: a form allowed by its session cookie must
  // carry that session's CSRF token.
  app.addHook("preValidation", async (request, reply) => {
    if (request.healerSession === undefined || !sessions) return;
    const given = (request.body as { csrf?: unknown } | undefined)?.csrf;
    if (typeof given !== "string" || !safeEqual(given, sessions.csrfOf(request.healerSession)))
      return deny(reply, { status: 403, message: "this form lacks a valid CSRF token; reload the view page and try again" });
  });

  app.get("/", async (_req, reply) => reply.redirect("/healer", 303));
  app.get("/healer/health", async () => ({ status: "ok", service: "healer" }));
  app.get("/healer/status", async () => healer.status());
  // Counts only, like /healer/status: public.
  const metrics = serviceMetrics(healer.store);
  app.get("/metrics", async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()));

  const loginThrottle = new FailureWindow(LOGIN_FAILURES_PER_WINDOW, LOGIN_WINDOW_MS);
  app.get("/healer/login", async (request, reply) => {
    const next = safeNext((request.query as { next?: string }).next);
    if (!sessions) return reply.redirect(next, 303);
    return sendPage(reply, loginPage(next));
  });

  app.post("/healer/login", { schema: { body: loginBody } }, async (request, reply) => {
    const form = request.body as { token: string; next?: string };
    const next = safeNext(form.next);
    if (!sessions || !token) return reply.redirect(next, 303);
    // Keyed by the connection's address, never by a header the client writes.
    const client = request.socket.remoteAddress ?? "";
    const wait = loginThrottle.blockedFor(client);
    if (wait > 0)
      return reply
        .code(429)
        .header("retry-after", String(wait))
        .send({ error: "too_many_requests", message: `too many failed sign-ins from this address; try again in ${wait} s` });
    if (!safeEqual(form.token, token)) {
      loginThrottle.failed(client);
      return sendPage(reply.code(401), loginPage(next, "That is not this Healer's token."));
    }
    const secure = publicUrl?.protocol === "https:" ? "; Secure" : "";
    return reply
      .header(
        "set-cookie",
        `${SESSION_COOKIE}=${sessions.issue()}; Path=/healer; HttpOnly; SameSite=Strict; Max-Age=${SESSION_SECONDS}${secure}`,
      )
      .redirect(next, 303);
  });

  const ingest = groupCommit(healer);
  app.post("/healer/ingest", { schema: { body: ingestBody } }, async (request) => {
    const { ticket, created, reopened, repeated } = await ingest(request.body as ErrorReport);
    // A report sent again after a lost answer was counted the first time.
    if (!repeated) metrics.ingested(created);
    // A closed ticket the report put back in the queue (a retry, a regression) is processed as a new one is.
    const now = created || reopened ? await healer.processTicket(ticket.id) : ticket;
    return { ticket_id: now.id, status: now.status, created, occurrences: now.occurrences, ...(repeated ? { repeated } : {}) };
  });

  app.get("/healer/tickets", { schema: { querystring: ticketsQuery } }, async (request) => {
    const q = request.query as { status?: TicketStatus; priority?: Priority; contract_fqn?: string; limit?: number };
    const list = await healer.store.list({ status: q.status, priority: q.priority, contract_fqn: q.contract_fqn }, q.limit ?? 1000);
    return list.map((t) => redactValue(t, healer.env));
  });

  app.get("/healer/tickets/:ticket_id", { schema: { params: idParams } }, async (request) => {
    const t = redactValue(await healer.store.resolve((request.params as { ticket_id: string }).ticket_id), healer.env);
    return { ...t, trace_url: traceUrl(t, healer.env) };
  });

  app.get("/healer/tickets/:ticket_id/view", { schema: { params: idParams } }, async (request, reply) => {
    // Shown redacted: a contract's secrets (an auth contract's passwords) never reach a page.
    const t = redactValue(await healer.store.resolve((request.params as { ticket_id: string }).ticket_id), healer.env);
    const done = (request.query as { done?: string }).done;
    const flash = done ? flashOf(done, t.status, t.resolution_note) : undefined;
    const sid = sessions ? sessions.verify(cookieOf(request, SESSION_COOKIE)) : null;
    const liveSince = t.diff_id ? readLive(join(healer.layout.root, ".forge")).diffs[t.diff_id] : undefined;
    const csrf = sid && sessions ? sessions.csrfOf(sid) : undefined;
    return sendPage(reply, ticketPage(t, { csrf, flash, liveSince, traceUrl: traceUrl(t, healer.env) }));
  });

  app.get("/healer", async (_request, reply) => {
    const [tickets, status] = await Promise.all([healer.store.list({}, 500), healer.status()]);
    // Shown redacted like every other answer: a ticket stored by an older version may hold secrets.
    const shown = tickets.map((t) => redactValue(t, healer.env));
    return sendPage(reply, indexPage(shown, status, await healer.waitingForBudget()));
  });

  app.post("/healer/approve/:ticket_id", { schema: { params: fullIdParams } }, async (request) => {
    const t = await requireProposed(healer, (request.params as { ticket_id: string }).ticket_id, "approved");
    const done = await healer.approve(t.id, acceptedRisk(request.body));
    // The status is `approved`; the apply runs at once, so its outcome comes with it.
    return { ticket_id: done.id, status: "approved", outcome: done.status, resolution_note: done.resolution_note };
  });

  app.post("/healer/reject/:ticket_id", { schema: { params: fullIdParams, body: rejectBody } }, async (request) => {
    const t = await requireProposed(healer, (request.params as { ticket_id: string }).ticket_id, "rejected");
    const reason = (request.body as { reason?: string } | undefined)?.reason ?? "";
    const done = await healer.reject(t.id, reason);
    return { ticket_id: done.id, status: done.status };
  });

  // `charter dev` asks the Healer to validate its own domains directory: no path on the wire.
  app.post("/healer/scan", async () => {
    const { check, tickets } = await healer.scan();
    await healer.processQueue();
    const ids = [...new Map(tickets.map((r) => [r.ticket.id, r.created])).entries()];
    const now = await Promise.all(ids.map(async ([id, created]) => ({ ticket: await healer.store.get(id), created })));
    return {
      tickets: now.filter((x) => x.ticket).map((x) => ({ ticket_id: x.ticket?.id, status: x.ticket?.status, created: x.created })),
      errors: check.errors,
    };
  });

  // Post/Redirect/Get: a form action always ends in a 303 to the view page, with what happened.
  app.post("/healer/approve/:ticket_id/action", { schema: { params: fullIdParams } }, async (request, reply) => {
    const t = await healer.store.resolve((request.params as { ticket_id: string }).ticket_id);
    let done = "not-proposed";
    if (t.status === "proposed") {
      // The form's checkboxes, one per finding that needs confirming; the store decides.
      const unaccepted = unacceptedRisk(t.proposal?.risk, acceptedRisk(request.body));
      if (unaccepted) return reply.redirect(`/healer/tickets/${t.id}/view?done=risk-not-accepted`, 303);
      done = (await healer.approve(t.id, acceptedRisk(request.body))).status;
    }
    return reply.redirect(`/healer/tickets/${t.id}/view?done=${done}`, 303);
  });

  app.post("/healer/reject/:ticket_id/action", { schema: { params: fullIdParams } }, async (request, reply) => {
    const form = (request.body ?? {}) as { reason?: string };
    const t = await healer.store.resolve((request.params as { ticket_id: string }).ticket_id);
    let done = "not-proposed";
    if (t.status === "proposed") done = (await healer.reject(t.id, String(form.reason ?? "").slice(0, 2000))).status;
    return reply.redirect(`/healer/tickets/${t.id}/view?done=${done}`, 303);
  });

  // The owner asks again for a failed or rejected ticket (a repeat of the error alone does only after a change).
  app.post("/healer/retry/:ticket_id", { schema: { params: fullIdParams } }, async (request) => {
    const done = await healer.retry((request.params as { ticket_id: string }).ticket_id);
    return { ticket_id: done.id, status: done.status, resolution_note: done.resolution_note };
  });

  app.post("/healer/retry/:ticket_id/action", { schema: { params: fullIdParams } }, async (request, reply) => {
    const t = await healer.store.resolve((request.params as { ticket_id: string }).ticket_id);
    let done = "not-retryable";
    if (t.status === "failed" || t.status === "rejected") done = `retried-${(await healer.retry(t.id)).status}`;
    return reply.redirect(`/healer/tickets/${t.id}/view?done=${done}`, 303);
  });

  return app;
}

interface Denial {
  status: 401 | 403 | 415;
  message: string;
  /** A browser asking for a page is sent to the login form instead of a JSON 401. */
  login?: string;
}

interface AuthSettings {
  token: string | undefined;
  sessions: Sessions | undefined;
  publicUrl: URL | undefined;
  host: string | undefined;
}

/**
 * The one auth decision (docs/threat-model.md). With a token: the bearer token on every write and
 * read; view pages and their forms may use the session cookie of a token login instead, the forms
 * then with the session's CSRF field (checked once the body is parsed). Without a token: the owner
 * is whoever sits at this machine, so reads and writes come from loopback under an allowed Host
 * name, and writes also from the same origin; ingest stays open to the app.
 */
function decide(request: FastifyRequest, s: AuthSettings): Denial | null {
  const route = request.routeOptions.url;
  if (route === undefined) return null; // the 404 handler answers
  const method = request.method === "HEAD" ? "GET" : request.method;
  const access: Access = ACCESS[`${method} ${route}`] ?? "write";
  if (access === "public") return null;
  const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const formRoute = access === "form" || (access === "login" && method === "POST");
  // A cross-site page can post a plain form without asking; only the form routes read one.
  if (type && type !== "application/json" && !(formRoute && type === "application/x-www-form-urlencoded"))
    return { status: 415, message: `content type ${type} is not accepted here; send application/json` };
  if (access === "login") return method === "POST" ? sameOrigin(request, s.publicUrl) : null;
  if (s.token && s.sessions) {
    if (bearerMatches(request, s.token)) return null;
    if (access === "read" || access === "form") {
      const sid = s.sessions.verify(cookieOf(request, SESSION_COOKIE));
      if (sid !== null) {
        if (access === "form") {
          const cross = sameOrigin(request, s.publicUrl);
          if (cross) return cross;
          request.healerSession = sid;
        }
        return null;
      }
      if (access === "read" && method === "GET" && (route === "/healer" || route.endsWith("/view")))
        return { status: 401, message: "sign in with the Healer token", login: request.url };
    }
    return { status: 401, message: "this Healer requires its token (SVC_HEALER_TOKEN) as a bearer token" };
  }
  const host = request.headers.host ?? "";
  if (access === "ingest") {
    // Open to the app, but not to a page of another site whose name now resolves to this machine
    // (DNS rebinding): its Host is that name. An address literal cannot be rebound.
    if (hostAllowed(host, request.socket.localPort ?? 0, s) || isAddressLiteral(host)) return null;
    return { status: 403, message: `Host ${JSON.stringify(host)} is not this Healer's address` };
  }
  if (!isLoopback(request.socket.remoteAddress))
    return { status: 403, message: "without SVC_HEALER_TOKEN, tickets are read and decided only from this machine" };
  if (!hostAllowed(host, request.socket.localPort ?? 0, s))
    return { status: 403, message: `Host ${JSON.stringify(host)} is not this Healer's address` };
  if (access === "read") return null;
  return sameOrigin(request, s.publicUrl);
}

/** `Sec-Fetch-Site` and `Origin`, when a browser sends them, must say the request comes from this service's own pages. */
function sameOrigin(request: FastifyRequest, publicUrl: URL | undefined): Denial | null {
  const site = request.headers["sec-fetch-site"];
  if (typeof site === "string" && site !== "same-origin" && site !== "none")
    return { status: 403, message: `cross-site request refused (Sec-Fetch-Site: ${site})` };
  const origin = request.headers.origin;
  if (origin === undefined) return null;
  const url = parseUrl(origin);
  const own = url !== undefined && (url.host === request.headers.host || (publicUrl !== undefined && url.origin === publicUrl.origin));
  return own ? null : { status: 403, message: `cross-origin request from ${origin} refused` };
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The Host allow-list (against DNS rebinding): loopback names, the listen address and the public URL's host, on this port. */
function hostAllowed(host: string, localPort: number, s: AuthSettings): boolean {
  const url = parseUrl(`http://${host}`);
  if (!url || host === "") return false;
  const name = url.hostname.toLowerCase();
  const port = url.port === "" ? 80 : Number(url.port);
  if (s.publicUrl && url.host === s.publicUrl.host) return true;
  if (port !== localPort) return false;
  const listen = s.host && s.host !== "0.0.0.0" && s.host !== "::" ? s.host.toLowerCase() : undefined;
  return LOOPBACK_NAMES.has(name) || name === listen || `[${listen}]` === name;
}

/**
 * A fixed window of failures per key: after `limit` failures a key waits out the rest of its
 * window. Other keys are unaffected, so one client's guessing never locks out another's sign-in.
 */
class FailureWindow {
  private readonly windows = new Map<string, { failures: number; endsAt: number }>();
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}
  /** Seconds the key must still wait; 0 when it may try. */
  blockedFor(key: string, now = Date.now()): number {
    const w = this.windows.get(key);
    if (!w || w.endsAt <= now) return 0;
    return w.failures >= this.limit ? Math.ceil((w.endsAt - now) / 1000) : 0;
  }
  failed(key: string, now = Date.now()): void {
    const w = this.windows.get(key);
    if (w && w.endsAt > now) w.failures++;
    else {
      // Expired windows go first, so many addresses cannot grow the map without bound.
      if (this.windows.size >= 10_000) for (const [k, v] of this.windows) if (v.endsAt <= now) this.windows.delete(k);
      this.windows.set(key, { failures: 1, endsAt: now + this.windowMs });
    }
  }
}

/** `10.0.0.5:8070`, `[fe80::1]:8070`: a Host naming an address rather than a name. */
function isAddressLiteral(host: string): boolean {
  const url = parseUrl(`http://${host}`);
  return url !== undefined && host !== "" && (isIP(url.hostname) !== 0 || /^\[[\da-f:.]+\]$/i.test(url.hostname));
}

/**
 * Sessions of the view pages, signed rather than stored: `<expiry>.<id>.<HMAC>` under a key derived
 * from the token (replicas sharing a token accept each other's sessions; a new token ends them all).
 * The CSRF token is another HMAC of the session id, so it needs no store either.
 */
class Sessions {
  private readonly key: Buffer;
  constructor(token: string) {
    this.key = createHmac("sha256", token).update("charter-healer-session").digest();
  }
  issue(): string {
    const body = `${Math.floor(Date.now() / 1000) + SESSION_SECONDS}.${randomBytes(18).toString("base64url")}`;
    return `${body}.${this.sign(body)}`;
  }
  /** The session id of a valid, unexpired cookie value; null otherwise. */
  verify(value: string | undefined): string | null {
    const m = /^(\d+)\.([\w-]+)\.([\w-]+)$/.exec(value ?? "");
    if (!m) return null;
    const [, exp, sid, sig] = m as unknown as [string, string, string, string];
    if (!safeEqual(sig, this.sign(`${exp}.${sid}`)) || Number(exp) * 1000 < Date.now()) return null;
    return sid;
  }
  csrfOf(sid: string): string {
    return this.sign(`csrf:${sid}`);
  }
  private sign(text: string): string {
    return createHmac("sha256", this.key).update(text).digest("base64url");
  }
}

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/** Where the login sends the browser back: a Healer page of this service, nothing else. */
function safeNext(next: string | undefined): string {
  return next && /^\/healer(\/[\w/-]*)?(\?[\w=&.-]*)?$/.test(next) ? next : "/healer";
}

function deny(reply: FastifyReply, d: Denial): FastifyReply {
  if (d.login) return reply.redirect(`/healer/login?next=${encodeURIComponent(d.login)}`, 303);
  if (d.status === 401) reply.header("www-authenticate", 'Bearer realm="charter-healer"');
  const error = d.status === 401 ? "unauthorized" : d.status === 415 ? "unsupported_media_type" : "forbidden";
  return reply.code(d.status).send({ error, message: d.message });
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

/** `accept_risk` of a JSON body or form: one finding id or a list of them (never "all" over HTTP). */
function acceptedRisk(body: unknown): string[] {
  const v = (body ?? {}) as { accept_risk?: unknown };
  const list = Array.isArray(v.accept_risk) ? v.accept_risk : v.accept_risk === undefined ? [] : [v.accept_risk];
  return list.filter((x): x is string => typeof x === "string");
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

/** Ajv's message, with the field an `additionalProperties` error is about (Ajv keeps it in params). */
function validationMessage(error: Error & { validation?: unknown }): string {
  const first = (error.validation as { keyword?: string; instancePath?: string; params?: { additionalProperty?: string } }[])[0];
  if (first?.keyword === "additionalProperties" && first.params?.additionalProperty) {
    const at = first.instancePath ? ` in ${first.instancePath.slice(1)}` : "";
    return `unknown field ${JSON.stringify(first.params.additionalProperty)}${at}: a report carries only the documented fields`;
  }
  return error.message;
}

function sendPage(reply: FastifyReply, page: string): FastifyReply {
  return reply
    .type("text/html; charset=utf-8")
    .header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
    .header("x-content-type-options", "nosniff")
    .header("cache-control", "no-store")
    .send(page);
}

function flashOf(done: string, status: string, note: string): string {
  if (done === "not-proposed") return `Nothing done: the ticket is ${status}, not proposed.`;
  if (done === "applied") return "Approved: the fix was applied and the code regenerated.";
  if (done === "failed") return `Approved, but applying failed: ${note}`;
  if (done === "rejected") return "Rejected.";
  if (done === "not-retryable") return `Nothing done: the ticket is ${status}; only a failed or rejected ticket can be retried.`;
  if (done.startsWith("retried-")) return `Retried: the ticket is ${status} now.`;
  if (done === "risk-not-accepted")
    return "Not approved: tick every finding that destroys data or weakens a rule to confirm it, then approve again.";
  return `Done: ${status}.`;
}

/** Deepest nesting of arrays and objects in JSON text, counted without parsing (a deep body never reaches JSON.parse). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/** The JSON Pointer of the first string or key holding a NUL character (PostgreSQL text cannot). */
function nulAt(value: unknown, at: string): string | null {
  if (typeof value === "string") return value.includes("\u0000") ? at : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulAt(value[i], `${at}/${i}`);
      if (found !== null) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes("\u0000")) return `${at}/${k.split("\u0000").join("\\u0000")}`;
      const found = nulAt(v, `${at}/${k}`);
      if (found !== null) return found;
    }
  }
  return null;
}

function parseUrl(text: string | undefined): URL | undefined {
  if (!text) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function bearerMatches(request: FastifyRequest, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? "");
  return m !== null && safeEqual((m[1] as string).trim(), token);
}

/** Constant-time comparison; comparing HMACs of both sides keeps even the length from leaking. */
function safeEqual(a: string, b: string): boolean {
  const x = createHmac("sha256", "compare").update(a).digest();
  const y = createHmac("sha256", "compare").update(b).digest();
  return timingSafeEqual(x, y);
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

function httpError(statusCode: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { statusCode, code });
}
