import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { generateTarget } from "../../src/generators/registry.js";
import { writeFiles } from "../../src/generators/writer.js";
import type { Ticket } from "../../src/healer/index.js";
import { makeProject, NO_PROVIDER_ENV } from "../healer/helpers.js";
import { type HealerProcess, startHealerProcess } from "../healer/serve-process.js";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { REPO_ROOT } from "../support/cli.js";
import { freePort } from "../support/net.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { VENV_PYTHON } from "../support/python.js";
import { client } from "./http.js";

/*
 * The generated helpdesk on PostgreSQL as it runs in production: JSON logs, /metrics, traces sent
 * over OTLP/HTTP to a receiver of this test (the SDK switched on by OTEL_EXPORTER_OTLP_ENDPOINT
 * alone), and `charter healer serve` taking its error reports.
 */

interface Span {
  service: string;
  scope: string;
  name: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  attributes: Record<string, string | number>;
}

/** An OTLP/HTTP receiver on 127.0.0.1: keeps every protobuf body POSTed to /v1/traces. */
async function startOtlpReceiver(): Promise<{ url: string; bodies: Buffer[]; close(): Promise<void> }> {
  const bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/traces") {
        const raw = Buffer.concat(chunks);
        bodies.push(req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw);
      }
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The spans of the received bodies, decoded by the OTLP protobuf classes the app's venv installs. */
function decodeSpans(bodies: readonly Buffer[]): Span[] {
  if (bodies.length === 0) return [];
  const script = `
import base64, json, sys
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind in ("string_value", "int_value", "bool_value", "double_value") else str(v)

out = []
for line in sys.stdin.read().split():
    request = ExportTraceServiceRequest.FromString(base64.b64decode(line))
    for rs in request.resource_spans:
        service = next((a.value.string_value for a in rs.resource.attributes if a.key == "service.name"), "")
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append({"service": service, "scope": ss.scope.name, "name": s.name, "trace_id": s.trace_id.hex(),
                            "span_id": s.span_id.hex(), "parent_span_id": s.parent_span_id.hex(),
                            "attributes": {a.key: value(a.value) for a in s.attributes}})
print(json.dumps(out))
`;
  const input = bodies.map((b) => b.toString("base64")).join("\n");
  return JSON.parse(execFileSync(VENV_PYTHON, ["-c", script], { input, encoding: "utf8" })) as Span[];
}

/** `name{labels} value` lines of the Prometheus text format, keyed by name and labels as printed. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: () => string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out: ${what()}`);
}

describe("observability of the generated app (PostgreSQL, OTLP receiver, Healer)", () => {
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let healer: HealerProcess;
  let app: RunningBackend;
  let root: string;
  let db: string;
  let token: string;
  let admin: ReturnType<typeof client>;
  let traceHeaders: (incoming: Pick<Headers, "get">) => Record<string, string>;
  const PASSWORD = "admin-password";

  /** The app's log lines, each parsed (a line that is not JSON fails the test that reads it). */
  const logLines = (): Record<string, unknown>[] =>
    app
      .logs()
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          throw new Error(`a log line is not JSON: ${l}`);
        }
      });

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    root = makeProject(join(REPO_ROOT, "examples", "helpdesk"), "helpdesk");
    healer = await startHealerProcess(root, { ...NO_PROVIDER_ENV, SVC_HEALER_TRACE_URL: "https://traces.example/trace/{trace_id}" });
    // The frontend's helper that gives the server's calls to the API their trace context.
    const domainDir = join(root, "domains", "helpdesk");
    const { ir } = checkDomain(domainDir);
    if (!ir) throw new Error("the helpdesk does not compile");
    const outDir = join(root, "runtime");
    writeFiles(outDir, generateTarget(ir, "nextjs", outDir));
    ({ traceHeaders } = (await import(join(outDir, "frontend", "src", "lib", "trace-context.ts"))) as {
      traceHeaders: typeof traceHeaders;
    });
    db = freshDatabase("charter_observability");
    app = await startGeneratedBackend({
      domainDir,
      outDir,
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      env: {
        SVC_HEALER_URL: healer.url,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_SERVICE_NAME: "helpdesk-api",
        // Spans leave within 100 ms instead of 5 s.
        OTEL_BSP_SCHEDULE_DELAY: "100",
      },
    });
    const login = await client(app.url).post("/auth/login", { email: "admin@example.com", password: PASSWORD });
    expect(login.status).toBe(200);
    token = login.body.access_token as string;
    admin = client(app.url, token);
  }, 600_000);

  afterAll(async () => {
    await app?.stop();
    await healer?.stop();
    await otlp?.close();
  });

  it("counts every request of a load in /metrics, per route template and status", async () => {
    const before = samples((await admin.get("/metrics")).body as string);
    const created: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await admin.post("/customers", { name: `Load ${i}`, email: `load${i}@load.test`, company: "Load" });
      expect(r.status).toBe(201);
      created.push(r.body.id as string);
    }
    const sent = { list: 150, listSlash: 20, found: 120, missing: 60, unmatched: 30 };
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < sent.list; i++) calls.push(admin.get("/customers?limit=5"));
    // With a trailing slash too: the same route, whichever way the path is written.
    for (let i = 0; i < sent.listSlash; i++) calls.push(admin.get("/customers/?limit=5"));
    for (let i = 0; i < sent.found; i++) calls.push(admin.get(`/customers/${created[i % created.length]}`));
    for (let i = 0; i < sent.missing; i++) calls.push(admin.get(`/customers/00000000-0000-4000-8000-${String(i).padStart(12, "0")}`));
    for (let i = 0; i < sent.unmatched; i++) calls.push(admin.get(`/no-such-thing/${i}`));
    // In batches of 20: a few hundred requests, some at once.
    for (let i = 0; i < calls.length; i += 20) await Promise.all(calls.slice(i, i + 20));
    const scrape = await admin.get("/metrics");
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("content-type")).toContain("text/plain");
    const after = samples(scrape.body as string);
    const delta = (key: string): number => (after.get(key) ?? 0) - (before.get(key) ?? 0);
    const series = (route: string, status: number, method = "GET") => `{method="${method}",route="${route}",status="${status}"}`;
    expect(delta(`http_requests_total${series("/customers", 201, "POST")}`)).toBe(40);
    expect(delta(`http_requests_total${series("/customers", 200)}`)).toBe(sent.list + sent.listSlash);
    expect(delta(`http_requests_total${series("/customers/{record_id}", 200)}`)).toBe(sent.found);
    expect(delta(`http_requests_total${series("/customers/{record_id}", 404)}`)).toBe(sent.missing);
    // Paths that match no route share one series, whatever they are.
    expect(delta(`http_requests_total${series("unmatched", 404)}`)).toBe(sent.unmatched);
    expect([...after.keys()].some((k) => k.includes("no-such-thing"))).toBe(false);
    // The histogram counted the same requests.
    expect(delta(`http_request_duration_seconds_count${series("/customers/{record_id}", 200)}`)).toBe(sent.found);
    expect(delta(`http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/customers",status="200"}`)).toBe(
      sent.list + sent.listSlash,
    );
    // The pool and the outbox: every create wrote an event, and nothing delivers them (no agents run).
    expect(after.get("db_pool_size")).toBe(10);
    expect(after.get("db_pool_in_use")).toBeGreaterThanOrEqual(0);
    expect(after.has("db_pool_waits_total")).toBe(true);
    expect(after.get('outbox_events{state="pending"}')).toBeGreaterThanOrEqual(40);
    expect(after.get('outbox_events{state="parked"}')).toBe(0);
  });

  it("sends the request's span, its PostgreSQL spans and the frontend's parent in one trace; ids match the header and the log", async () => {
    // What the generated Next.js server sends with its call to the API, continuing a page request's trace.
    const pageTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const sent = traceHeaders(new Headers({ traceparent: `00-${pageTrace}-00f067aa0ba902b7-01` }));
    const frontendSpan = sent.traceparent?.split("-")[2] ?? "";
    expect(sent.traceparent).toMatch(new RegExp(`^00-${pageTrace}-[0-9a-f]{16}-01$`));
    expect(frontendSpan).not.toBe("00f067aa0ba902b7");
    const r = await admin.call("GET", "/customers?limit=3", undefined, sent);
    expect(r.status).toBe(200);
    const requestId = r.headers.get("x-request-id") ?? "";
    // Derived from the trace context: the trace, then the caller's span.
    expect(requestId).toBe(`${pageTrace}-${frontendSpan}`);

    const spans = await until(
      () => {
        const all = decodeSpans(otlp.bodies).filter((s) => s.trace_id === pageTrace);
        return all.some((s) => s.scope.includes("asyncpg")) && all.some((s) => s.scope.includes("fastapi")) ? all : undefined;
      },
      () => `no complete trace ${pageTrace}; app log:\n${app.logs()}`,
    );
    const server = spans.find((s) => s.scope.includes("fastapi"));
    expect(server).toMatchObject({ service: "helpdesk-api", name: "GET /customers", parent_span_id: frontendSpan });
    expect(server?.attributes["http.request_id"]).toBe(requestId);
    const queries = spans.filter((s) => s.scope.includes("asyncpg"));
    expect(queries.length).toBeGreaterThan(0);
    for (const q of queries) expect(q.parent_span_id).toBe(server?.span_id);
    expect(queries.some((q) => String(q.attributes["db.statement"] ?? q.attributes["db.query.text"] ?? "").includes("customers"))).toBe(
      true,
    );

    const line = await until(
      () => logLines().find((l) => l.logger === "app.requests" && l.request_id === requestId),
      () => "no log line of the request",
    );
    expect(line).toMatchObject({ level: "info", trace_id: pageTrace, route: "/customers", status: 200, user_id: "admin" });
    expect(typeof line.duration_ms).toBe("number");
    expect(typeof line.timestamp).toBe("string");
  });

  it("ties a runtime error to its request: the 500 body, the log line and the Healer ticket carry its ids", async () => {
    // A constraint the contracts do not know: the next create fails inside the app with a 500.
    psql(db, "ALTER TABLE customers ADD CONSTRAINT customers_no_boom CHECK (company <> 'Boom') NOT VALID;");
    const r = await admin.call(
      "POST",
      "/customers",
      { name: "Boom", email: "boom@boom.test", company: "Boom" },
      { "X-Request-ID": "req-boom-1" },
    );
    expect(r.status).toBe(500);
    expect(r.headers.get("x-request-id")).toBe("req-boom-1");
    expect(r.body).toEqual({ error: "internal_error", message: "an internal error occurred", request_id: "req-boom-1" });
    // A client's own valid id is kept; the trace is the one the app started for it.
    const line = await until(
      () => logLines().find((l) => l.logger === "app.requests" && l.request_id === "req-boom-1"),
      () => "no log line of the failed request",
    );
    expect(line.status).toBe(500);
    const traceId = String(line.trace_id);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    const ticket = await until(
      async () => {
        const list = (await (await fetch(`${healer.url}/healer/tickets?contract_fqn=entity/helpdesk/customer`)).json()) as Ticket[];
        return list.find((t) => t.request_id === "req-boom-1");
      },
      () => `no ticket; Healer log:\n${healer.output()}`,
    );
    expect(ticket).toMatchObject({ source: "runtime", request_id: "req-boom-1", trace_id: traceId });
    const one = (await (await fetch(`${healer.url}/healer/tickets/${ticket.id}`)).json()) as Ticket & { trace_url: string };
    expect(one.trace_url).toBe(`https://traces.example/trace/${traceId}`);
    const page = await (await fetch(`${healer.url}/healer/tickets/${ticket.id}/view`)).text();
    expect(page).toContain('<code id="request-id">req-boom-1</code>');
    expect(page).toContain(`<a id="trace-link" href="https://traces.example/trace/${traceId}"`);
    // The Healer's own figures count the report.
    const healerMetrics = samples(await (await fetch(`${healer.url}/metrics`)).text());
    expect(healerMetrics.get('healer_reports_ingested_total{result="created"}')).toBeGreaterThanOrEqual(1);
    expect(healerMetrics.get("healer_queue_depth")).toBeGreaterThanOrEqual(0);
    // And the app's: one report sent.
    const appMetrics = samples((await admin.get("/metrics")).body as string);
    expect(appMetrics.get('healer_reports_total{result="sent"}')).toBe(1);
  });

  it("writes every log line as JSON, never with a token, a password or an Authorization header", async () => {
    // A failed login and a request with a bad token on top of the signed-in traffic above.
    await client(app.url).post("/auth/login", { email: "admin@example.com", password: "wrong-password-123" });
    await client(app.url, "not.a.valid-token").get("/customers");
    const lines = logLines();
    expect(lines.length).toBeGreaterThan(400);
    for (const l of lines) {
      expect(typeof l.timestamp).toBe("string");
      expect(typeof l.level).toBe("string");
      expect(typeof l.message).toBe("string");
    }
    const text = app.logs();
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split(".")[2]);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain("wrong-password-123");
    expect(text).not.toContain("not.a.valid-token");
    expect(text.toLowerCase()).not.toContain("authorization");
    expect(text).not.toContain("Bearer");
    // Each request's line names the caller once the token is checked, and only then.
    const requests = lines.filter((l) => l.logger === "app.requests");
    expect(requests.some((l) => l.status === 401 && l.user_id === null)).toBe(true);
    expect(requests.filter((l) => typeof l.request_id !== "string" || typeof l.route !== "string")).toEqual([]);
  });
});

describe("trace sampling of the generated app (PostgreSQL, OTLP receiver)", () => {
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let app: RunningBackend;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    const root = makeProject(join(REPO_ROOT, "examples", "helpdesk"), "helpdesk");
    const db = freshDatabase("charter_observability_sampled");
    app = await startGeneratedBackend({
      domainDir: join(root, "domains", "helpdesk"),
      outDir: join(root, "runtime"),
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_SERVICE_NAME: "helpdesk-api",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.5",
      },
    });
  }, 600_000);

  afterAll(async () => {
    await app?.stop();
    await otlp?.close();
  });

  it("decides a trace with no caller as the SDK's own sampler does, for every standard OTEL_TRACES_SAMPLER", () => {
    // The head decision answers the standard samplers itself (one comparison); it must never
    // differ from what the SDK decides when the span starts, or a kept request loses its span.
    const script = `
import random, sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind
from app.observability import _root_decision
sampler = TracerProvider().sampler
decide = _root_decision(sampler)
if decide is None:
    sys.exit(f"no decision of its own for {sampler.get_description()}")
rng = random.Random(7)
ids = [rng.getrandbits(128) for _ in range(20000)] + [0, 1, (1 << 64) - 1, 1 << 64, (1 << 128) - 1]
differ = [t for t in ids if decide(t) != sampler.should_sample(None, t, "HTTP", SpanKind.SERVER).decision.is_sampled()]
print(len(differ), sum(decide(t) for t in ids))
`;
    const cases: [string, string, (kept: number) => boolean][] = [
      ["parentbased_traceidratio", "0.25", (k) => k > 4500 && k < 5500],
      ["traceidratio", "0.01", (k) => k > 100 && k < 320],
      ["parentbased_traceidratio", "1", (k) => k === 20005],
      ["always_on", "", (k) => k === 20005],
      ["always_off", "", (k) => k === 0],
      ["parentbased_always_on", "", (k) => k === 20005],
      ["parentbased_always_off", "", (k) => k === 0],
    ];
    for (const [name, arg, plausible] of cases) {
      const out = execFileSync(VENV_PYTHON, ["-c", script], {
        cwd: app.backendDir,
        // (app.config checks the settings on import: a development app needs none.)
        env: { ...process.env, APP_ENV: "development", OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: arg },
        encoding: "utf8",
      });
      const [differ = -1, kept = -1] = out.trim().split(" ").map(Number);
      expect(differ, `${name} ${arg}`).toBe(0);
      expect(plausible(kept), `${name} ${arg}: kept ${kept}`).toBe(true);
    }
  });

  it("records the requests the sampler keeps, whole, and nothing of the others; callers' decisions stand", async () => {
    const login = await client(app.url).post("/auth/login", { email: "admin@example.com", password: "admin-password" });
    expect(login.status).toBe(200);
    const admin = client(app.url, login.body.access_token as string);
    const roots = 200;
    for (let i = 0; i < roots; i += 20) {
      const batch = Array.from({ length: 20 }, (_, k) =>
        admin.call("GET", "/customers?limit=1", undefined, { "X-Request-ID": `root-${i + k}` }),
      );
      for (const r of await Promise.all(batch)) expect(r.status).toBe(200);
    }
    // A caller that sampled its trace, and one that did not: the ratio does not apply to either.
    const kept = Array.from({ length: 10 }, (_, i) => `${"a".repeat(30)}${String(i).padStart(2, "0")}`);
    const dropped = Array.from({ length: 10 }, (_, i) => `${"b".repeat(30)}${String(i).padStart(2, "0")}`);
    for (const t of kept) await admin.call("GET", "/customers?limit=1", undefined, { traceparent: `00-${t}-00f067aa0ba902b7-01` });
    for (const t of dropped) await admin.call("GET", "/customers?limit=1", undefined, { traceparent: `00-${t}-00f067aa0ba902b7-00` });

    const lines = () =>
      app
        .logs()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.logger === "app.requests");
    const rootLines = await until(
      () => {
        const found = lines().filter((l) => String(l.request_id).startsWith("root-"));
        return found.length === roots ? found : undefined;
      },
      () => "not every request logged",
    );
    // A request's log line names its trace only if a span records it.
    const sampledRoots = new Set(rootLines.filter((l) => typeof l.trace_id === "string").map((l) => String(l.trace_id)));
    // Half of them, give or take: a sampler asked twice with different trace ids keeps a quarter.
    expect(sampledRoots.size).toBeGreaterThan(roots * 0.35);
    expect(sampledRoots.size).toBeLessThan(roots * 0.65);

    // Every request whose line names a trace (the login too, if kept), and the callers' sampled ones.
    const expected = await until(
      () => {
        // (A caller's unsampled trace is named too: it is the caller's, which this app did not record.)
        const traced = new Set(
          lines().flatMap((l) => (typeof l.trace_id === "string" && !dropped.includes(l.trace_id) ? [l.trace_id] : [])),
        );
        return kept.every((t) => traced.has(t)) ? traced : undefined;
      },
      () => "the callers' sampled requests are not logged with their trace",
    );
    for (const t of sampledRoots) expect(expected.has(t)).toBe(true);
    const spans = await until(
      () => {
        const all = decodeSpans(otlp.bodies);
        const servers = new Set(all.filter((s) => s.scope.includes("fastapi")).map((s) => s.trace_id));
        return [...expected].every((t) => servers.has(t)) ? all : undefined;
      },
      () => `missing server spans; app log:\n${app.logs().slice(-3000)}`,
    );
    await new Promise((r) => setTimeout(r, 500));
    const all = decodeSpans(otlp.bodies);
    const servers = all.filter((s) => s.scope.includes("fastapi"));
    // Exactly the kept requests have a server span: none of the others, and none twice.
    expect(new Set(servers.map((s) => s.trace_id))).toEqual(expected);
    expect(servers).toHaveLength(expected.size);
    for (const t of dropped) expect(all.some((s) => s.trace_id === t)).toBe(false);
    // Every query span belongs to a recorded request: a left-out request's queries make none.
    const serverIds = new Set(servers.map((s) => s.span_id));
    const queries = all.filter((s) => s.scope.includes("asyncpg"));
    // (The app's start makes query spans of its own, outside any request.)
    const ofRequests = queries.filter((q) => /\bFROM "?customers\b/.test(String(q.attributes["db.statement"] ?? "")));
    expect(ofRequests.length).toBeGreaterThan(0);
    for (const q of ofRequests) expect(serverIds.has(q.parent_span_id)).toBe(true);
    expect(spans.length).toBeGreaterThan(0);
  });
});

describe("/metrics behind METRICS_TOKEN or on METRICS_PORT alone, and the line per request (memory backend)", () => {
  let guarded: RunningBackend;
  let apart: RunningBackend;
  let metricsPort: number;
  const TOKEN = "scrape-token-0123456789";

  beforeAll(async () => {
    const root = makeProject(join(REPO_ROOT, "examples", "helpdesk"), "helpdesk");
    const domainDir = join(root, "domains", "helpdesk");
    guarded = await startGeneratedBackend({ domainDir, outDir: join(root, "guarded"), backend: "memory", env: { METRICS_TOKEN: TOKEN } });
    metricsPort = await freePort();
    apart = await startGeneratedBackend({
      domainDir,
      outDir: join(root, "apart"),
      backend: "memory",
      env: { METRICS_PORT: String(metricsPort), METRICS_HOST: "127.0.0.1" },
    });
  }, 600_000);

  afterAll(async () => {
    await guarded?.stop();
    await apart?.stop();
  });

  it("writes the line per request as logging would, and through logging once anyone changes it", () => {
    // The line skips logging's machinery only while logging is as the app set it up: a handler or a
    // filter someone adds, or a level that turns the line off, must see or stop it as usual.
    const script = `
import io, json, logging, sys
import app.observability as o

o.setup_logging()
stream = io.StringIO()
o._json_handler.setStream(stream)
o._current.set(o.RequestContext("rid-1", None))
fields = {"method": "GET", "route": "/tickets/{record_id}", "path": "/tickets/7", "status": 200, "duration_ms": 1.5, "user_id": "u1"}
out = {}
def lines():
    text = stream.getvalue()
    stream.seek(0)
    stream.truncate()
    return [json.loads(l) for l in text.splitlines()]
o._log_request("GET /tickets/7 200", fields)
out["direct"] = lines()
o.access_logger.info("%s", "GET /tickets/7 200", extra={"fields": fields})
out["logging"] = lines()
class Drop(logging.Filter):
    def filter(self, record): return False
drop = Drop()
o.access_logger.addFilter(drop)
o._log_request("GET /tickets/7 200", fields)
out["filtered"] = lines()
o.access_logger.removeFilter(drop)
extra = io.StringIO()
second = logging.StreamHandler(extra)
second.setFormatter(o.JsonFormatter())
logging.getLogger("app").addHandler(second)
o._log_request("GET /tickets/7 200", fields)
out["two_handlers"] = [lines(), [json.loads(l) for l in extra.getvalue().splitlines()]]
logging.getLogger("app").removeHandler(second)
o.access_logger.setLevel(logging.WARNING)
o._log_request("GET /tickets/7 200", fields)
out["quiet"] = lines()
o.access_logger.setLevel(logging.NOTSET)
o._log_request("GET /tickets/7 200", fields)
out["again"] = lines()
import asyncio
async def turn():
    o._log_request("GET /a 200", fields)
    o._log_request("GET /b 200", fields)
    waiting = lines()
    await asyncio.sleep(0)
    written = lines()
    o._log_request("GET /c 200", fields)
    logging.getLogger("app").warning("meanwhile")
    return {"waiting": waiting, "written": written, "before_other": lines()}
out["loop"] = asyncio.run(turn())
print(json.dumps(out))
`;
    const out = JSON.parse(
      execFileSync(VENV_PYTHON, ["-c", script], {
        cwd: guarded.backendDir,
        env: { ...process.env, APP_ENV: "development", LOG_FORMAT: "json" },
        encoding: "utf8",
      }),
    ) as Record<string, unknown>;
    const withoutTime = (lines: unknown) =>
      (lines as Record<string, unknown>[]).map(({ timestamp, ...rest }) => {
        expect(String(timestamp)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
        return rest;
      });
    const expected = [
      {
        level: "info",
        logger: "app.requests",
        message: "GET /tickets/7 200",
        request_id: "rid-1",
        method: "GET",
        route: "/tickets/{record_id}",
        path: "/tickets/7",
        status: 200,
        duration_ms: 1.5,
        user_id: "u1",
      },
    ];
    expect(withoutTime(out.direct)).toEqual(expected);
    expect(withoutTime(out.logging)).toEqual(expected);
    expect(out.filtered).toEqual([]);
    const [own, second] = out.two_handlers as unknown[];
    expect(withoutTime(own)).toEqual(expected);
    expect(withoutTime(second)).toEqual(expected);
    expect(out.quiet).toEqual([]);
    expect(withoutTime(out.again)).toEqual(expected);
    // On the event loop the lines of one turn go out together when it ends; a record logged before
    // then writes them first, so the stream keeps its order.
    const loop = out.loop as Record<string, { message: string }[]>;
    expect(loop.waiting).toEqual([]);
    expect(loop.written?.map((l) => l.message)).toEqual(["GET /a 200", "GET /b 200"]);
    expect(loop.before_other?.map((l) => l.message)).toEqual(["GET /c 200", "meanwhile"]);
  });

  it("asks scrapers for the token, and counts for the one that has it", async () => {
    for (const authorization of [undefined, "Bearer wrong-token", `Basic ${TOKEN}`, TOKEN]) {
      const r = await fetch(`${guarded.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(r.status, String(authorization)).toBe(401);
      expect(await r.text()).not.toContain("http_requests_total");
    }
    const scrape = async () => {
      const r = await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(r.status).toBe(200);
      return samples(await r.text());
    };
    const health = 'http_requests_total{method="GET",route="/health",status="200"}';
    const before = (await scrape()).get(health) ?? 0;
    for (let i = 0; i < 7; i++) expect((await fetch(`${guarded.url}/health`)).status).toBe(200);
    const figures = await scrape();
    expect(figures.get(health)).toBe(before + 7);
    // The refused scrapes count too, as what they were: 401s of /metrics.
    expect(figures.get('http_requests_total{method="GET",route="/metrics",status="401"}')).toBe(4);
  });

  it("serves the figures on their own port, read by its listener thread, and not on the API's", async () => {
    expect((await fetch(`${apart.url}/metrics`)).status).toBe(404);
    const series = '{method="GET",route="/health",status="200"}';
    const scrape = async () => samples(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
    // (The test's wait for the app to start asked /health already.)
    const before = (await scrape()).get(`http_requests_total${series}`) ?? 0;
    const sent = 300;
    for (let i = 0; i < sent; i += 30) {
      await Promise.all(Array.from({ length: 30 }, () => fetch(`${apart.url}/health`).then((r) => r.arrayBuffer())));
    }
    // Scraped while requests run: the counter and the histogram's +Inf bucket agree in each scrape.
    const during = Array.from({ length: 100 }, () => fetch(`${apart.url}/health`).then((r) => r.arrayBuffer()));
    const scrapes: Map<string, number>[] = [];
    for (let i = 0; i < 5; i++) scrapes.push(await scrape());
    await Promise.all(during);
    for (const s of scrapes) {
      const count = s.get(`http_requests_total${series}`) ?? 0;
      expect(count).toBeGreaterThanOrEqual(before + sent);
      expect(s.get(`http_request_duration_seconds_count${series}`)).toBe(count);
      expect(s.get(`http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/health",status="200"}`)).toBe(count);
    }
    const last = await scrape();
    expect(last.get(`http_requests_total${series}`)).toBe(before + sent + 100);
    // Buckets are cumulative: each holds at least what the one below it does.
    const buckets = [...last.entries()].filter(
      ([k]) => k.startsWith("http_request_duration_seconds_bucket{") && k.includes('route="/health"'),
    );
    expect(buckets.length).toBe(14);
    const counts = buckets.map(([, n]) => n);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1] ?? 0);
    expect(last.get(`http_request_duration_seconds_sum${series}`)).toBeGreaterThan(0);
  });
});
