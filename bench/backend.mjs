#!/usr/bin/env node
// Throughput of the generated backend against the hand-tuned anchor (../shared/anchors/handtuned.py:
// FastAPI + asyncpg + orjson, no response-model pass), in the same run, on the same machine, over
// the same PostgreSQL table of 10,000 rows (see the anchors' README). The generated side is the
// domain in bench/backend-domain (entity `item`, table `items`). Both apps run under uvicorn with 2
// workers; wrk (Debian) drives them with 2 threads and 64 connections; each scenario runs the apps
// in ABBA order, 10 s each, and prints req/s, p99 and the ratio generated / anchor.
//
// Scenarios: GET by id (random existing ids), list of 100 with total, a deep page (the anchor's
// offset 9000 against the generated app's cursor after the same 9,000 rows, with and without the
// total, and in the order `sort=-created_at`), create. Figures only, no assertions: on a shared
// machine only the ratios of one run count.
//
// BENCH_MODE=observability measures what the generated app's metrics and traces cost instead: GET
// by id on the same generated app with METRICS_ENABLED=false and no OTEL_* against one with
// /metrics on and every request traced (exported over OTLP/HTTP to a sink of this script), ABBA,
// and how long /metrics takes to answer with 100 route series filled (a domain of 25 entities on
// the memory backend).
//
//   node bench/backend.mjs           (BENCH_SECONDS=10, BENCH_CONNECTIONS=64; BENCH_ANCHORS=dir;
//                                     BENCH_TOTAL=counter; BENCH_ONLY=a scenario's name or part of names;
//                                     BENCH_ROUNDS=ABBA rounds per scenario;
//                                     BENCH_MODE=observability, BENCH_INSTANCES=starts per pair)
import { execFileSync, spawn } from "node:child_process";
import { closeSync, cpSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const PYTHON = join(ROOT, ".cache/venv/bin/python");
// The anchors sit beside the project (../shared); from a worktree under a folder of its own, one further up.
const ANCHORS = resolve(
  process.env.BENCH_ANCHORS ??
    [join(ROOT, "../shared/anchors"), join(ROOT, "../../shared/anchors")].find((d) => existsSync(d)) ??
    join(ROOT, "../shared/anchors"),
);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_ANCHOR = "charter_bench_backend_anchor";
const DB_GENERATED = "charter_bench_backend_generated";
const dbUrl = (db) => `postgresql://postgres@127.0.0.1:5432/${db}`;
const ROWS = 10_000;
// BENCH_TOTAL=counter generates the entity with `list_total: counter` (totals from counters).
const TOTAL = process.env.BENCH_TOTAL ?? "count";
// BENCH_MODE=observability: how many times each pair of apps is started afresh (see abba there).
const INSTANCES = Math.max(1, Number(process.env.BENCH_INSTANCES ?? 1));
// How many ABBA rounds each scenario runs: with more than one, the row gives the mean of every run
// and the range of the rounds' own ratios (how far one round's verdict can be trusted).
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1));

function psql(url, sql) {
  return execFileSync("psql", ["-qAtX", "-v", "ON_ERROR_STOP=1", url], {
    input: sql,
    encoding: "utf8",
    env: { ...process.env, PGOPTIONS: "-c client_min_messages=warning" },
  });
}

/** The anchor's table and rows, exactly as its setup_db.sh builds them. */
const ROWS_SQL = (columns, extra) => `
INSERT INTO items(${columns})
SELECT md5('item-' || g)::uuid, 'item-' || g,
       (ARRAY['low','medium','high'])[1 + g % 3],
       (ARRAY['open','in_progress','done'])[1 + g % 3],
       now() - (g || ' minutes')::interval, now()${extra}
FROM generate_series(1, ${ROWS}) g;
VACUUM ANALYZE items;`;

function prepareDatabases(schemaSql) {
  for (const db of [DB_ANCHOR, DB_GENERATED]) psql(ADMIN, `DROP DATABASE IF EXISTS ${db};\nCREATE DATABASE ${db};`);
  psql(
    dbUrl(DB_ANCHOR),
    `CREATE TABLE items(id uuid PRIMARY KEY, name text NOT NULL, priority text, state text,
       created_at timestamptz, updated_at timestamptz);
     ${ROWS_SQL("id, name, priority, state, created_at, updated_at", "")}`,
  );
  psql(dbUrl(DB_GENERATED), schemaSql);
  psql(
    dbUrl(DB_GENERATED),
    `${ROWS_SQL("id, name, priority, state, created_at, updated_at, number", ", 'ITM-' || lpad(g::text, 5, '0')")}
     SELECT setval('item_number_seq', ${ROWS});`,
  );
}

function freePort() {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function serve(name, cwd, appRef, env, probe, workers = 2) {
  const port = await freePort();
  // The generated app logs a JSON line per request: kept in a file (written as in production, where
  // a collector reads them) rather than on the terminal.
  const logFile = join(cwd, `${name.replace(/\W+/g, "-")}.log`);
  const log = openSync(logFile, "w");
  const child = spawn(
    PYTHON,
    [
      "-m",
      "uvicorn",
      appRef,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--workers",
      String(workers),
      "--no-access-log",
      "--log-level",
      "warning",
    ],
    { cwd, env: { ...process.env, ...env }, stdio: ["ignore", log, log], detached: true },
  );
  closeSync(log);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${readFileSync(logFile, "utf8").slice(-3000)}`);
    try {
      if ((await fetch(`${url}${probe}`)).ok) break;
    } catch {}
    if (i > 300) throw new Error(`${name} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise((r) => {
        child.once("exit", r);
        process.kill(-child.pid, "SIGTERM");
      }),
  };
}

/** CPU time (ms) a process has used so far, 0 for one that is gone; `only` filters by command name. */
function processCpuMs(pid, only) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (only && !stat.includes(`(${only})`)) return 0;
    const fields = stat.split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU time (ms) used so far by a process and its children (the uvicorn workers). */
function cpuMs(pid) {
  const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
    .split(/\s+/)
    .filter(Boolean);
  return [pid, ...children].reduce((sum, p) => sum + processCpuMs(p), 0);
}

/** CPU time (ms) used so far by PostgreSQL's processes (the server and its backends). */
function postgresCpuMs() {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .reduce((sum, p) => sum + processCpuMs(p, "postgres"), 0);
}

/**
 * One wrk run: requests/s, the 99th percentile latency in ms, and the CPU time per request (µs) of
 * the app and of PostgreSQL (less sensitive than throughput to what else runs on the machine; only
 * one app is driven at a time, so PostgreSQL's CPU is that app's queries).
 */
function wrk(app, path, { script, env = {}, connections = CONNECTIONS } = {}) {
  const url = `${app.url}${path}`;
  const args = ["-t2", `-c${connections}`, `-d${SECONDS}s`, "--latency", ...(script ? ["-s", script] : []), url];
  const cpu0 = cpuMs(app.pid);
  const db0 = postgresCpuMs();
  const out = execFileSync("wrk", args, { encoding: "utf8", env: { ...process.env, ...env } });
  const cpu = cpuMs(app.pid) - cpu0;
  const db = postgresCpuMs() - db0;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s)\b/.exec(out);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  if (!p99 || Number.isNaN(rps)) throw new Error(`unexpected wrk output:\n${out}`);
  if (non2xx > 0) throw new Error(`${url}: ${non2xx} responses were not 2xx:\n${out}`);
  const scale = { us: 0.001, ms: 1, s: 1000 }[p99[2]];
  return { rps, p99: Number(p99[1]) * scale, cpuUs: (cpu * 1000) / requests, dbUs: (db * 1000) / requests };
}

/**
 * The generated backend (app and schema) in `work`/backend. BENCH_BACKEND=dir serves a copy of that
 * backend instead (say, a hand-edited one, to try a change before teaching it to the generator).
 */
function backendInto(work) {
  if (process.env.BENCH_BACKEND) {
    cpSync(resolve(process.env.BENCH_BACKEND), join(work, "backend"), { recursive: true });
    return;
  }
  let domain = join(ROOT, "bench/backend-domain");
  if (TOTAL === "counter") {
    // The same domain with the entity's totals kept by counters (`list_total: counter`).
    const copy = join(work, "domain");
    cpSync(domain, copy, { recursive: true });
    const entity = join(copy, "entities/item.contract.yaml");
    writeFileSync(entity, readFileSync(entity, "utf8").replace("\nspec:\n", "\nspec:\n  list_total: counter\n"));
    domain = copy;
  }
  for (const target of ["fastapi-prod", "postgres"]) {
    const args = ["forge", "generate", domain, "-t", target, "-o", work];
    execFileSync(process.execPath, [join(ROOT, "dist/cli/charter.js"), ...args], { stdio: "ignore" });
  }
}

async function cursorAfter(url, rows, sort = "") {
  let cursor = null;
  for (let seen = 0; seen < rows; seen += 100) {
    const page = await (
      await fetch(`${url}/items?limit=100&with_total=false${sort}${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`)
    ).json();
    cursor = page.next_cursor;
  }
  return cursor;
}

/**
 * An OTLP/HTTP sink on 127.0.0.1 that takes every export and answers 200: a process of its own,
 * since wrk runs synchronously here and would leave exports to a server of this one unanswered.
 */
async function otlpSink() {
  const script = `
let bodies = 0;
const server = require("node:http").createServer((req, res) => {
  req.resume();
  req.on("end", () => { bodies++; res.writeHead(200, { "content-type": "application/x-protobuf" }); res.end(); });
});
process.on("SIGTERM", () => { process.stdout.write("exports " + bodies + "\\n"); process.exit(0); });
server.listen(0, "127.0.0.1", () => process.stdout.write("port " + server.address().port + "\\n"));
`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  while (!/port (\d+)/.test(out)) await new Promise((r) => setTimeout(r, 50));
  let closed = null;
  return {
    url: `http://127.0.0.1:${/port (\d+)/.exec(out)[1]}`,
    /** Stops the sink (once) and says how many exports it took. */
    close: () => {
      closed ??= new Promise((r) => {
        child.once("exit", () => r(Number(/exports (\d+)/.exec(out)?.[1] ?? 0)));
        child.kill("SIGTERM");
      });
      return closed;
    },
  };
}

/** A domain of `n` entities like the bench's item (no workflow), for /metrics with many route series. */
function manyEntitiesDomain(dir, n) {
  const item = readFileSync(join(ROOT, "bench/backend-domain/entities/item.contract.yaml"), "utf8");
  for (let i = 0; i < n; i++) {
    const name = `thing${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}`;
    const prefix = `T${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}`;
    const entity = item
      .replace("name: item\n", `name: ${name}\n`)
      .replace("table: items", `table: ${name}s`)
      .replace("number_prefix: ITM", `number_prefix: ${prefix}`)
      .replace(/ +state_machine: .*\n/, "");
    writeFileSync(join(dir, "entities", `${name}.contract.yaml`), entity);
    writeFileSync(
      join(dir, "routes", `${name}_api.contract.yaml`),
      [
        "apiVersion: charter/v1",
        "kind: Route",
        "metadata:",
        `  name: ${name}_api`,
        "  domain: bench",
        "spec:",
        `  entity: entity/bench/${name}`,
        "  endpoints:",
        "    - { method: GET, path: / }",
        '    - { method: GET, path: "/{id}" }',
        '    - { method: PATCH, path: "/{id}" }',
        '    - { method: DELETE, path: "/{id}" }',
        "",
      ].join("\n"),
    );
  }
}

/** Milliseconds of `count` sequential GETs of `url`: median and 99th percentile. */
async function latencies(url, count) {
  const ms = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const r = await fetch(url);
    await r.arrayBuffer();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(count / 2)], p99: ms[Math.floor(count * 0.99)] };
}

async function observabilityCost(work, ids) {
  const sink = await otlpSink();
  const running = [];
  try {
    const base = { DATABASE_URL: dbUrl(DB_GENERATED), DATABASE_BACKEND: "postgres", DATABASE_POOL_SIZE: "16", APP_ENV: "production" };
    const get = (app) => wrk(app, "", { script: join(ANCHORS, "get_by_id.lua"), env: { IDS_FILE: ids } });
    console.log(
      `wrk -t2 -c${CONNECTIONS} -d${SECONDS}s, 2 uvicorn workers each, ${ROWS} rows, ABBA order per pair, both apps started afresh ${INSTANCES} time(s) per pair`,
    );
    const mean = (xs) => ({
      rps: xs.reduce((t, x) => t + x.rps, 0) / xs.length,
      p99: xs.reduce((t, x) => t + x.p99, 0) / xs.length,
      cpuUs: xs.reduce((t, x) => t + x.cpuUs, 0) / xs.length,
    });
    // Each variant runs beside an "off" app only, so that two apps at most hold connections. Both
    // are started afresh for each of BENCH_INSTANCES rounds: the same app started again runs a few
    // per cent faster or slower (where its memory and its workers land), as much as the costs
    // measured here, so only the mean over several starts tells them apart.
    const abba = async (name, env) => {
      const offs = [];
      const ons = [];
      for (let i = 0; i < INSTANCES; i++) {
        const off = await serve(
          `${name}-off-${i}`,
          join(work, "backend"),
          "app.main:app",
          { ...base, METRICS_ENABLED: "false" },
          "/health",
        );
        const on = await serve(`${name}-${i}`, join(work, "backend"), "app.main:app", { ...base, ...env }, "/health");
        try {
          const a1 = get(off);
          const b1 = get(on);
          const b2 = get(on);
          const a2 = get(off);
          offs.push(a1, a2);
          ons.push(b1, b2);
        } finally {
          await on.stop();
          await off.stop();
        }
      }
      return [mean(offs), mean(ons)];
    };
    const row = (label, x) =>
      console.log(
        `${label.padEnd(44)} ${x.rps.toFixed(0).padStart(7)} ${`${x.p99.toFixed(1)} ms`.padStart(10)} ${x.cpuUs.toFixed(0).padStart(10)}`,
      );
    console.log(`${"GET by id".padEnd(44)}   req/s        p99 CPU us/req`);
    const tracing = { METRICS_ENABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "bench" };
    const [off0, metrics] = await abba("observability-metrics", { METRICS_ENABLED: "true" });
    row("metrics and tracing off", off0);
    row("metrics on, tracing off", metrics);
    const [off1, all] = await abba("observability-on", tracing);
    row("metrics and tracing off (second pair)", off1);
    row("metrics on, every request traced", all);
    // Production tracing samples (callers' decisions kept): a tenth, and a hundredth, of the traces
    // started here. A request the sampler leaves out skips the span machinery altogether.
    const sampled = async (ratio, label) => {
      const [off, on] = await abba(`observability-sampled-${ratio}`, {
        ...tracing,
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: String(ratio),
      });
      row(`metrics and tracing off (${label} pair)`, off);
      row(`metrics on, ${ratio * 100}% of traces sampled`, on);
      return on.rps / off.rps;
    };
    const tenth = await sampled(0.1, "third");
    const hundredth = await sampled(0.01, "fourth");
    console.log(
      `throughput ratio, metrics only: ${(metrics.rps / off0.rps).toFixed(3)}x; every request traced: ${(all.rps / off1.rps).toFixed(3)}x; 10% sampled: ${tenth.toFixed(3)}x; 1% sampled: ${hundredth.toFixed(3)}x (goal >= 0.95x)`,
    );
    console.log(`OTLP exports received: ${await sink.close()}`);

    // /metrics with 100 route series: 25 entities x (GET list, GET, PATCH and DELETE by id).
    const domain = join(work, "many");
    cpSync(join(ROOT, "bench/backend-domain"), domain, { recursive: true });
    manyEntitiesDomain(domain, 25);
    const out = join(work, "many-out");
    execFileSync(process.execPath, [join(ROOT, "dist/cli/charter.js"), "forge", "generate", domain, "-t", "fastapi-prod", "-o", out], {
      stdio: "ignore",
    });
    const many = await serve(
      "observability-many",
      join(out, "backend"),
      "app.main:app",
      { DATABASE_BACKEND: "memory", APP_ENV: "production" },
      "/health",
      // One process: each uvicorn worker keeps figures of its own, and a scrape reaches one of them.
      1,
    );
    running.push(many);
    const missing = "00000000-0000-4000-8000-000000000000";
    for (let i = 0; i < 25; i++) {
      const path = `${many.url}/thing${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}s`;
      await (await fetch(path)).arrayBuffer();
      await (await fetch(`${path}/${missing}`)).arrayBuffer();
      await (
        await fetch(`${path}/${missing}`, { method: "PATCH", headers: { "content-type": "application/json" }, body: "{}" })
      ).arrayBuffer();
      await (await fetch(`${path}/${missing}`, { method: "DELETE" })).arrayBuffer();
    }
    const text = await (await fetch(`${many.url}/metrics`)).text();
    const routes = [...text.matchAll(/^http_requests_total\{/gm)].length;
    const t = await latencies(`${many.url}/metrics`, 200);
    console.log(
      `/metrics with ${routes} request series (${text.split("\n").length} lines, ${(text.length / 1024).toFixed(0)} KiB): median ${t.median.toFixed(1)} ms, p99 ${t.p99.toFixed(1)} ms over 200 requests (goal < 50 ms)`,
    );
  } finally {
    for (const r of running.reverse()) await r.stop();
    await sink.close();
  }
}

/**
 * BENCH_MODE=batches: what writing concurrent creates together (app/repositories/batches.py) gains
 * or costs at each load: the generated app with DATABASE_BATCH_CREATES=false against the same app
 * with it on, ABBA, from 2 to 64 connections.
 */
async function batchesCost(work, postGenerated) {
  const base = { DATABASE_URL: dbUrl(DB_GENERATED), DATABASE_BACKEND: "postgres", DATABASE_POOL_SIZE: "16", APP_ENV: "production" };
  const off = await serve("batches-off", join(work, "backend"), "app.main:app", { ...base, DATABASE_BATCH_CREATES: "false" }, "/health");
  const on = await serve("batches-on", join(work, "backend"), "app.main:app", { ...base, DATABASE_BATCH_CREATES: "true" }, "/health");
  try {
    console.log(
      `create, wrk -t2 -d${SECONDS}s, 2 uvicorn workers each, ABBA per load: one INSERT per create against creates written together`,
    );
    console.log(
      "connections   one each req/s  together req/s  ratio   one each p99  together p99  CPU µs/req one each  together  DB µs/req one each  together",
    );
    for (const connections of [2, 8, 16, 32, 64]) {
      const post = (app) => wrk(app, "/items", { script: postGenerated, connections });
      const a1 = post(off);
      const b1 = post(on);
      const b2 = post(on);
      const a2 = post(off);
      const mean = (x, y) => Object.fromEntries(Object.keys(x).map((k) => [k, (x[k] + y[k]) / 2]));
      const a = mean(a1, a2);
      const b = mean(b1, b2);
      console.log(
        `${String(connections).padStart(11)} ${a.rps.toFixed(0).padStart(16)} ${b.rps.toFixed(0).padStart(15)} ${(b.rps / a.rps).toFixed(2).padStart(6)}x ${`${a.p99.toFixed(1)} ms`.padStart(14)} ${`${b.p99.toFixed(1)} ms`.padStart(13)} ${a.cpuUs.toFixed(0).padStart(20)} ${b.cpuUs.toFixed(0).padStart(9)} ${a.dbUs.toFixed(0).padStart(19)} ${b.dbUs.toFixed(0).padStart(9)}`,
      );
    }
  } finally {
    await on.stop();
    await off.stop();
  }
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), "charter-bench-backend-"));
  const running = [];
  try {
    backendInto(work);
    // What both apps import (the generated requirements, and orjson for the anchor), into the venv
    // the tests share; pip does nothing when they are there already.
    execFileSync(
      PYTHON,
      ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", join(work, "backend/requirements.txt"), "orjson"],
      { stdio: "inherit" },
    );
    prepareDatabases(execFileSync("cat", [join(work, "backend/db/schema.sql")], { encoding: "utf8" }));
    const ids = join(work, "ids.txt");
    writeFileSync(ids, psql(dbUrl(DB_ANCHOR), "SELECT id FROM items ORDER BY random() LIMIT 2000"));
    const postGenerated = join(work, "post-generated.lua");
    // The anchor's post.lua body less `state`: the generated app sets the workflow's initial state
    // itself and refuses fields a client may not write.
    writeFileSync(
      postGenerated,
      `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '{"name":"bench-item","priority":"high"}'\n`,
    );

    if (process.env.BENCH_MODE === "observability") {
      await observabilityCost(work, ids);
      return;
    }
    if (process.env.BENCH_MODE === "batches") {
      await batchesCost(work, postGenerated);
      return;
    }
    const anchor = await serve("anchor", ANCHORS, "handtuned:app", { DATABASE_URL: dbUrl(DB_ANCHOR) }, "/items?limit=1");
    running.push(anchor);
    const generated = await serve(
      "generated",
      join(work, "backend"),
      "app.main:app",
      {
        DATABASE_URL: dbUrl(DB_GENERATED),
        DATABASE_BACKEND: "postgres",
        DATABASE_MIGRATE: "auto",
        DATABASE_POOL_SIZE: "16",
        APP_ENV: "production",
      },
      "/health",
    );
    running.push(generated);
    const deep = await cursorAfter(generated.url, 9000);
    const deepParam = encodeURIComponent(deep);
    // The same depth in an order the client asks for: its cursor seeks the created_at index too.
    const deepSorted = encodeURIComponent(await cursorAfter(generated.url, 9000, "&sort=-created_at"));

    // `goal`: the issue's goal for the ratio generated / anchor requests per second (issue 41).
    const scenarios = [
      {
        name: "GET by id",
        goal: 1.25,
        a: () => wrk(anchor, "", { script: join(ANCHORS, "get_by_id.lua"), env: { IDS_FILE: ids } }),
        b: () => wrk(generated, "", { script: join(ANCHORS, "get_by_id.lua"), env: { IDS_FILE: ids } }),
      },
      {
        name: "list(100) with total",
        goal: 1.0,
        a: () => wrk(anchor, `/items?limit=100&offset=0`),
        b: () => wrk(generated, `/items?limit=100`),
      },
      {
        name: "page 90 of 100: cursor vs offset 9000, with total",
        goal: 3,
        a: () => wrk(anchor, `/items?limit=100&offset=9000`),
        b: () => wrk(generated, `/items?limit=100&after=${deepParam}`),
      },
      {
        name: "page 90 of 100: cursor without total vs offset 9000",
        goal: 3,
        a: () => wrk(anchor, `/items?limit=100&offset=9000`),
        b: () => wrk(generated, `/items?limit=100&after=${deepParam}&with_total=false`),
      },
      {
        name: "page 90, sort=-created_at: cursor w/o total vs offset",
        goal: 3,
        a: () => wrk(anchor, `/items?limit=100&offset=9000`),
        b: () => wrk(generated, `/items?limit=100&sort=-created_at&after=${deepSorted}&with_total=false`),
      },
      {
        name: "create",
        goal: 1.1,
        a: () => wrk(anchor, `/items`, { script: join(ANCHORS, "post.lua") }),
        b: () => wrk(generated, `/items`, { script: postGenerated }),
      },
    ];

    console.log(
      `wrk -t2 -c${CONNECTIONS} -d${SECONDS}s, 2 uvicorn workers each, ${ROWS} rows, ABBA order × ${ROUNDS} round(s), list_total: ${TOTAL}`,
    );
    console.log(
      `scenario                                             anchor req/s  generated req/s  ratio   anchor p99  generated p99  p99 ratio  CPU µs/req anchor  generated  ratio  DB µs/req anchor  generated  ratio${ROUNDS > 1 ? "  ratio per round" : ""}`,
    );
    // BENCH_ONLY=create runs only the scenario of that name, or else those whose names contain it.
    const only = process.env.BENCH_ONLY;
    const exact = scenarios.some((x) => x.name === only);
    const mean = (runs) => {
      const avg = (k) => runs.reduce((sum, r) => sum + r[k], 0) / runs.length;
      return { rps: avg("rps"), p99: avg("p99"), cpuUs: avg("cpuUs"), dbUs: avg("dbUs") };
    };
    const verdicts = [];
    for (const s of scenarios.filter((x) => !only || (exact ? x.name === only : x.name.includes(only)))) {
      const as = [];
      const bs = [];
      const perRound = [];
      for (let round = 0; round < ROUNDS; round++) {
        const a1 = s.a();
        const b1 = s.b();
        const b2 = s.b();
        const a2 = s.a();
        as.push(a1, a2);
        bs.push(b1, b2);
        perRound.push((b1.rps + b2.rps) / (a1.rps + a2.rps));
      }
      const a = mean(as);
      const b = mean(bs);
      const ratio = b.rps / a.rps;
      verdicts.push(`target: ${s.name} >= ${s.goal.toFixed(2)}x the anchor: ${ratio.toFixed(3)}x -> ${ratio >= s.goal ? "MET" : "MISSED"}`);
      const range = ROUNDS > 1 ? `  ${Math.min(...perRound).toFixed(2)}-${Math.max(...perRound).toFixed(2)}x` : "";
      console.log(
        `${s.name.padEnd(52)} ${a.rps.toFixed(0).padStart(12)} ${b.rps.toFixed(0).padStart(16)} ${ratio.toFixed(2).padStart(6)}x ${`${a.p99.toFixed(1)} ms`.padStart(11)} ${`${b.p99.toFixed(1)} ms`.padStart(14)} ${(b.p99 / a.p99).toFixed(2).padStart(9)}x ${a.cpuUs.toFixed(0).padStart(18)} ${b.cpuUs.toFixed(0).padStart(10)} ${(a.cpuUs / b.cpuUs).toFixed(2).padStart(6)}x ${a.dbUs.toFixed(0).padStart(17)} ${b.dbUs.toFixed(0).padStart(10)} ${(a.dbUs / b.dbUs).toFixed(2).padStart(6)}x${range}`,
      );
    }
    console.log("ratio: generated / anchor requests per second (> 1 is faster); p99 ratio < 1 is better;");
    console.log("CPU ratio: anchor / generated app CPU time per request (> 1: the generated app does less work per request);");
    console.log("DB ratio: the same for PostgreSQL's CPU time per request");
    for (const verdict of verdicts) console.log(verdict);
  } finally {
    for (const r of running.reverse()) await r.stop();
    for (const db of [DB_ANCHOR, DB_GENERATED]) psql(ADMIN, `DROP DATABASE IF EXISTS ${db};`);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
