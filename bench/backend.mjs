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
// total), create. Figures only, no assertions: on a shared machine only the ratios of one run count.
//
//   node bench/backend.mjs           (BENCH_SECONDS=10, BENCH_CONNECTIONS=64; BENCH_ANCHORS=dir;
//                                     BENCH_TOTAL=counter; BENCH_ONLY=part of a scenario's name)
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

async function serve(name, cwd, appRef, env, probe) {
  const port = await freePort();
  const child = spawn(
    PYTHON,
    ["-m", "uvicorn", appRef, "--host", "127.0.0.1", "--port", String(port), "--workers", "2", "--no-access-log", "--log-level", "warning"],
    { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit"], detached: true },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode})`);
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
function wrk(app, path, { script, env = {} } = {}) {
  const url = `${app.url}${path}`;
  const args = ["-t2", `-c${CONNECTIONS}`, `-d${SECONDS}s`, "--latency", ...(script ? ["-s", script] : []), url];
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

async function cursorAfter(url, rows) {
  let cursor = null;
  for (let seen = 0; seen < rows; seen += 100) {
    const page = await (
      await fetch(`${url}/items?limit=100&with_total=false${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`)
    ).json();
    cursor = page.next_cursor;
  }
  return cursor;
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

    const scenarios = [
      {
        name: "GET by id",
        a: () => wrk(anchor, "", { script: join(ANCHORS, "get_by_id.lua"), env: { IDS_FILE: ids } }),
        b: () => wrk(generated, "", { script: join(ANCHORS, "get_by_id.lua"), env: { IDS_FILE: ids } }),
      },
      {
        name: "list(100) with total",
        a: () => wrk(anchor, `/items?limit=100&offset=0`),
        b: () => wrk(generated, `/items?limit=100`),
      },
      {
        name: "page 90 of 100: cursor vs offset 9000, with total",
        a: () => wrk(anchor, `/items?limit=100&offset=9000`),
        b: () => wrk(generated, `/items?limit=100&after=${deepParam}`),
      },
      {
        name: "page 90 of 100: cursor without total vs offset 9000",
        a: () => wrk(anchor, `/items?limit=100&offset=9000`),
        b: () => wrk(generated, `/items?limit=100&after=${deepParam}&with_total=false`),
      },
      {
        name: "create",
        a: () => wrk(anchor, `/items`, { script: join(ANCHORS, "post.lua") }),
        b: () => wrk(generated, `/items`, { script: postGenerated }),
      },
    ];

    console.log(`wrk -t2 -c${CONNECTIONS} -d${SECONDS}s, 2 uvicorn workers each, ${ROWS} rows, ABBA order, list_total: ${TOTAL}`);
    console.log(
      "scenario                                             anchor req/s  generated req/s  ratio   anchor p99  generated p99  p99 ratio  CPU µs/req anchor  generated  ratio  DB µs/req anchor  generated  ratio",
    );
    // BENCH_ONLY=create (or any part of a scenario's name) runs only the matching scenarios.
    for (const s of scenarios.filter((x) => !process.env.BENCH_ONLY || x.name.includes(process.env.BENCH_ONLY))) {
      const a1 = s.a();
      const b1 = s.b();
      const b2 = s.b();
      const a2 = s.a();
      const mean = (x, y) => ({
        rps: (x.rps + y.rps) / 2,
        p99: (x.p99 + y.p99) / 2,
        cpuUs: (x.cpuUs + y.cpuUs) / 2,
        dbUs: (x.dbUs + y.dbUs) / 2,
      });
      const a = mean(a1, a2);
      const b = mean(b1, b2);
      console.log(
        `${s.name.padEnd(52)} ${a.rps.toFixed(0).padStart(12)} ${b.rps.toFixed(0).padStart(16)} ${(b.rps / a.rps).toFixed(2).padStart(6)}x ${`${a.p99.toFixed(1)} ms`.padStart(11)} ${`${b.p99.toFixed(1)} ms`.padStart(14)} ${(b.p99 / a.p99).toFixed(2).padStart(9)}x ${a.cpuUs.toFixed(0).padStart(18)} ${b.cpuUs.toFixed(0).padStart(10)} ${(a.cpuUs / b.cpuUs).toFixed(2).padStart(6)}x ${a.dbUs.toFixed(0).padStart(17)} ${b.dbUs.toFixed(0).padStart(10)} ${(a.dbUs / b.dbUs).toFixed(2).padStart(6)}x`,
      );
    }
    console.log("ratio: generated / anchor requests per second (> 1 is faster); p99 ratio < 1 is better;");
    console.log("CPU ratio: anchor / generated app CPU time per request (> 1: the generated app does less work per request);");
    console.log("DB ratio: the same for PostgreSQL's CPU time per request");
  } finally {
    for (const r of running.reverse()) await r.stop();
    for (const db of [DB_ANCHOR, DB_GENERATED]) psql(ADMIN, `DROP DATABASE IF EXISTS ${db};`);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
