import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { Healer } from "../../src/healer/index.js";
import { buildHealerServer } from "../../src/healer/server/app.js";
import { makeProject, NO_PROVIDER_ENV } from "../healer/helpers.js";
import { generateBackend, startGeneratedBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { writeDomain } from "../support/domain.js";
import { freePort } from "../support/net.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { ensureVenvFromFile, VENV_PYTHON } from "../support/python.js";
import { randomDomain } from "../support/random-domain.js";
import { client } from "./http.js";

/**
 * The generated app's output read by the tools that consume it in production (issue 40):
 * Prometheus's own checker (`promtool check metrics`, Debian's `prometheus` package) on the app's
 * and the Healer's /metrics, and `jq` over every line the app writes, in development and in
 * production. scripts/setup.sh installs both.
 */
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tmp(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  roots.push(root);
  return root;
}

/** promtool's verdict on a scrape: its exit code and its findings (one a line; none when clean). */
function promtool(text: string): { code: number | null; findings: string } {
  const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8", timeout: 30_000 });
  if (r.error) throw r.error;
  return { code: r.status, findings: `${r.stdout}${r.stderr}`.trim() };
}

/** `# TYPE name kind` of a scrape, as a map. */
function types(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""]));
}

describe("promtool check metrics", () => {
  it("passes the app's /metrics on PostgreSQL, every counter a counter named *_total", async () => {
    const db = freshDatabase("charter_promtool");
    const app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir: tmp("charter-promtool-"),
      backend: "postgres",
      databaseUrl: databaseUrl(db),
    });
    try {
      const anon = client(app.url);
      const login = await anon.post("/auth/login", { email: "admin@example.com", password: "admin-password" });
      expect(login.status).toBe(200);
      const admin = client(app.url, login.body.access_token as string);
      // A create (an event in the outbox), a refusal, a route no one serves: series of each kind.
      expect((await admin.post("/customers", { name: "Ada", email: "ada@example.com" })).status).toBe(201);
      expect((await admin.post("/customers", "not json")).status).toBe(422);
      expect((await anon.get("/no-such-route")).status).toBe(404);
      const text = await (await fetch(`${app.url}/metrics`)).text();
      const kinds = types(text);
      for (const counter of [
        "http_requests_total",
        "db_pool_waits_total",
        "db_batched_inserts_total",
        "db_batched_creates_total",
        "healer_reports_total",
      ]) {
        expect(kinds.get(counter), counter).toBe("counter");
      }
      expect(kinds.get("outbox_events")).toBe("gauge");
      expect(kinds.get("http_request_duration_seconds")).toBe("histogram");
      expect(text).toMatch(/^outbox_events\{state="pending"\} [1-9]/m);
      // promtool passes an empty scrape too: the figures above show this one is whole.
      expect(promtool(text)).toEqual({ code: 0, findings: "" });
    } finally {
      await app.stop();
    }
  }, 180_000);

  it("passes the Healer's /metrics", async () => {
    const healer = new Healer({ projectRoot: makeProject(), console: null, env: NO_PROVIDER_ENV });
    const server = buildHealerServer({ healer });
    await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const address = server.server.address();
      const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
      const text = await (await fetch(`${url}/metrics`)).text();
      expect(types(text).get("healer_model_calls_total")).toBe("counter");
      expect(types(text).get("healer_tickets")).toBe("gauge");
      expect(promtool(text)).toEqual({ code: 0, findings: "" });
    } finally {
      await server.close();
      await healer.close();
    }
  }, 60_000);

  it("refuses what the issue found, so a pass above means something", () => {
    const gaugeNamedLikeACounter = "# HELP db_pool_waits_total x\n# TYPE db_pool_waits_total gauge\ndb_pool_waits_total 0\n";
    const r = promtool(gaugeNamedLikeACounter);
    expect(r.code).not.toBe(0);
    expect(r.findings).toContain("db_pool_waits_total");
  });
});

/**
 * Every line is one JSON object, as a log pipeline reads it: `jq -R 'fromjson'` parses each line on
 * its own and fails on the first that is not JSON (naming it). uvicorn runs with its access log on,
 * as a plain `uvicorn app.main:app` does, and the app still writes one line per request.
 */
describe.each([
  // The placeholder secret: the config's warning at start, PyJWT's InsecureKeyLengthWarning at login.
  { appEnv: "development", env: { APP_ENV: "development" }, unset: ["AUTH_SECRET"], warnings: 2 },
  { appEnv: "production", env: { APP_ENV: "production", AUTH_SECRET: TEST_AUTH_SECRET }, unset: [], warnings: 0 },
])("jq over every log line, APP_ENV=$appEnv", ({ env, unset, warnings }) => {
  it("reads a JSON object on every line of stdout and stderr, one line per request", async () => {
    const app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir: tmp("charter-jq-"),
      backend: "memory",
      env,
      unset,
      accessLog: true,
    });
    const sent = ["/health", "/no-such-route", "/tickets"];
    let logs: string;
    try {
      const anon = client(app.url);
      for (const path of sent) await anon.get(path);
      expect((await anon.post("/auth/login", { email: "admin@example.com", password: "admin-password" })).status).toBe(200);
    } finally {
      await app.stop();
      logs = app.logs();
    }
    const jq = (filter: string): string => {
      const r = spawnSync("jq", ["-R", "-r", filter], { input: logs, encoding: "utf8", timeout: 30_000 });
      if (r.error) throw r.error;
      expect(r.status, `jq ${filter}: ${r.stderr}\n${logs}`).toBe(0);
      return r.stdout;
    };
    // The startup's readiness probes of the helper add GET /health lines: count the ones sent here.
    const nonObjects = jq('fromjson | select(type != "object") | tojson');
    expect(nonObjects).toBe("");
    const loggers = jq("fromjson | .logger").trim().split("\n");
    expect(loggers).not.toContain("uvicorn.access");
    const requests = jq('fromjson | select(.logger == "app.requests") | .message').trim().split("\n");
    expect(requests.filter((m) => m === "GET /health 200").length).toBeGreaterThanOrEqual(1);
    for (const line of ["GET /no-such-route 404", "GET /tickets 401", "POST /auth/login 200"]) {
      expect(
        requests.filter((m) => m === line),
        line,
      ).toHaveLength(1);
    }
    const warned = jq('fromjson | select(.logger == "py.warnings") | .message').trim();
    expect(warned ? warned.split("\n").filter((l) => /Warning: /.test(l)) : []).toHaveLength(warnings);
  }, 120_000);
});

/** Runs jq over `text` line by line with `filter` (each line parsed on its own); fails on any line that is not JSON. */
function jqLines(text: string, filter: string): string {
  const r = spawnSync("jq", ["-R", "-r", filter], { input: text, encoding: "utf8", timeout: 30_000 });
  if (r.error) throw r.error;
  expect(r.status, `jq ${filter}: ${r.stderr}\n${text}`).toBe(0);
  return r.stdout;
}

/**
 * The same tools on apps of a seeded draw of random domains (names, field types and features the
 * example lacks), on PostgreSQL: every collection read once, then /metrics through promtool and
 * every log line through jq.
 */
describe.each(fc.sample(randomDomain(), { numRuns: 2, seed: 40_042 }).map(({ files }, i) => ({ i, files })))(
  "random domain $i",
  ({ i, files }) => {
    it("passes promtool check metrics and jq over every log line", async () => {
      const domainDir = writeDomain(files);
      roots.push(domainDir);
      const db = freshDatabase(`charter_ecosystem_random_${i}`);
      const app = await startGeneratedBackend({
        domainDir,
        outDir: tmp("charter-ecosystem-random-"),
        backend: "postgres",
        databaseUrl: databaseUrl(db),
        env: { APP_ENV: "development" },
        unset: ["AUTH_SECRET"],
        accessLog: true,
      });
      let logs: string;
      let text: string;
      try {
        const openapi = (await (await fetch(`${app.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
        const collections = Object.entries(openapi.paths).filter(([path, ops]) => !path.includes("{") && "get" in ops);
        expect(collections.length).toBeGreaterThan(1);
        for (const [path] of collections) expect((await fetch(`${app.url}${path}`)).status).toBeLessThan(500);
        text = await (await fetch(`${app.url}/metrics`)).text();
      } finally {
        await app.stop();
        logs = app.logs();
      }
      expect(types(text).get("db_pool_waits_total")).toBe("counter");
      expect(promtool(text)).toEqual({ code: 0, findings: "" });
      expect(jqLines(logs, 'fromjson | select(type != "object") | tojson')).toBe("");
      expect(jqLines(logs, "fromjson | .logger").split("\n")).not.toContain("uvicorn.access");
    }, 180_000);
  },
);

describe("jq over the lines of a refused start", () => {
  it("reads the reason as a JSON line: a weak secret in production, an invalid setting, a bad exporter", async () => {
    const backendDir = generateBackend("examples/helpdesk", tmp("charter-jq-refused-"));
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
    const cases: [Record<string, string>, string][] = [
      [{ APP_ENV: "production", AUTH_SECRET: "change-me" }, "refusing to start: AUTH_SECRET still has its placeholder value"],
      [{ AUTH_SECRET: TEST_AUTH_SECRET, DATABASE_BACKEND: "sqlite" }, "invalid settings: DATABASE_BACKEND"],
      [{ AUTH_SECRET: TEST_AUTH_SECRET, OTEL_TRACES_EXPORTER: "zipkin" }, "invalid settings: OTEL_TRACES_EXPORTER"],
    ];
    for (const [env, reason] of cases) {
      const port = String(await freePort());
      const r = spawnSync(VENV_PYTHON, ["-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port", port], {
        cwd: backendDir,
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", DATABASE_BACKEND: "memory", ...env },
        encoding: "utf8",
        timeout: 60_000,
      });
      const output = `${r.stdout}${r.stderr}`;
      expect(r.status, output).not.toBe(0);
      expect(r.status, output).not.toBeNull();
      expect(jqLines(output, 'fromjson | select(type != "object") | tojson')).toBe("");
      expect(jqLines(output, 'fromjson | select(.level == "critical") | .message'), output).toContain(reason);
    }
  }, 120_000);
});
