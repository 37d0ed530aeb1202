#!/usr/bin/env node
// Throughput of the generated helpdesk backend against a minimal hand-written FastAPI + asyncpg
// app over the same PostgreSQL table (bench/backend-handwritten.py). Both run with 2 uvicorn
// workers; autocannon drives each in turn at 64 connections: GET by id, list of 100, create, each
// app twice per scenario in ABBA order. Prints the mean req/s, p50, p99, each run's req/s and the
// ratio generated / hand-written. Figures only, no assertions.
//
// Both apps keep their own asyncpg settings: the same pool size (10) and uvicorn flags, but the
// generated app releases pooled connections without asyncpg's default reset query (app/storage.py,
// _keep_session), while the baseline keeps asyncpg's defaults, as a minimal hand-written app would.
//
//   node bench/backend.mjs            (BENCH_SECONDS=10 by default, BENCH_CONNECTIONS=64)
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import autocannon from "autocannon";

const ROOT = resolve(import.meta.dirname, "..");
const PYTHON = join(ROOT, ".cache/venv/bin/python");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const DB = "charter_bench_backend";
const DB_URL = `postgresql://postgres@127.0.0.1:5432/${DB}`;

function psql(db, sql) {
  return execFileSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", db, "-v", "ON_ERROR_STOP=1", "-qAtX"], {
    input: sql,
    encoding: "utf8",
  });
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

async function waitFor(url, child) {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode})`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up`);
}

async function serve(cwd, appRef, env) {
  const port = await freePort();
  const child = spawn(
    PYTHON,
    ["-m", "uvicorn", appRef, "--host", "127.0.0.1", "--port", String(port), "--workers", "2", "--no-access-log", "--log-level", "warning"],
    { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit"], detached: true },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, child);
  return {
    url,
    stop: () =>
      new Promise((r) => {
        child.once("exit", r);
        process.kill(-child.pid, "SIGTERM");
      }),
  };
}

function load(opts) {
  return new Promise((res, rej) => {
    autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts }, (err, result) => (err ? rej(err) : res(result)));
  });
}

async function main() {
  const out = mkdtempSync(join(tmpdir(), "charter-bench-"));
  try {
    for (const target of ["fastapi-prod", "postgres", "migrations"]) {
      execFileSync(
        process.execPath,
        [
          "--import",
          "tsx",
          join(ROOT, "src/cli/charter.ts"),
          "forge",
          "generate",
          join(ROOT, "examples/helpdesk"),
          "--target",
          target,
          "--output",
          out,
        ],
        { cwd: ROOT, stdio: "ignore" },
      );
    }
    const backend = join(out, "backend");
    execFileSync(PYTHON, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", join(backend, "requirements.txt")], {
      stdio: "inherit",
    });
    psql("postgres", `DROP DATABASE IF EXISTS ${DB} WITH (FORCE); CREATE DATABASE ${DB};`);

    const env = { DATABASE_URL: DB_URL, DATABASE_BACKEND: "postgres", AUTH_ENABLED: "false" };
    const generated = await serve(backend, "app.main:app", env);
    // Seed through the generated API: one customer, 1000 tickets.
    const customer = await (
      await fetch(`${generated.url}/customers`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Bench", email: "bench@example.com" }),
      })
    ).json();
    let ticketId = "";
    for (let i = 0; i < 1000; i++) {
      const t = await (
        await fetch(`${generated.url}/tickets`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ title: `Seed ticket ${i}`, customer_id: customer.id }),
        })
      ).json();
      ticketId ||= t.id;
    }
    const handwritten = await serve(join(ROOT, "bench"), "backend-handwritten:app", env);

    const createBody = JSON.stringify({ title: "Load ticket", customer_id: customer.id, description: "created by the benchmark" });
    const scenarios = [
      { name: "GET by id", opts: (url) => ({ url: `${url}/tickets/${ticketId}` }) },
      { name: "list of 100", opts: (url) => ({ url: `${url}/tickets?limit=100` }) },
      {
        name: "create",
        opts: (url) => ({ url: `${url}/tickets`, method: "POST", headers: { "content-type": "application/json" }, body: createBody }),
      },
    ];
    const rows = [];
    for (const s of scenarios) {
      // Warm both (prepared statements, pools), then measure in the order generated, hand-written,
      // hand-written, generated (ABBA) and average each app's two runs: whatever drifts during a
      // scenario (a checkpoint, autovacuum after the inserts, the table growing under create) then
      // weighs on both alike instead of on whichever app happens to run first.
      await load({ ...s.opts(generated.url), duration: 2 });
      await load({ ...s.opts(handwritten.url), duration: 2 });
      const g1 = await load(s.opts(generated.url));
      const h1 = await load(s.opts(handwritten.url));
      const h2 = await load(s.opts(handwritten.url));
      const g2 = await load(s.opts(generated.url));
      const mean = (a, b, f) => (f(a) + f(b)) / 2;
      const rps = (r) => r.requests.average;
      const bad = (r) => r.non2xx + r.errors;
      const [g, h] = [mean(g1, g2, rps), mean(h1, h2, rps)];
      rows.push({
        scenario: s.name,
        "gen req/s": Math.round(g),
        "gen p50 ms": mean(g1, g2, (r) => r.latency.p50),
        "gen p99 ms": mean(g1, g2, (r) => r.latency.p99),
        "hand req/s": Math.round(h),
        "hand p50 ms": mean(h1, h2, (r) => r.latency.p50),
        "hand p99 ms": mean(h1, h2, (r) => r.latency.p99),
        ratio: (g / h).toFixed(2),
        runs: `${Math.round(rps(g1))},${Math.round(rps(g2))} / ${Math.round(rps(h1))},${Math.round(rps(h2))}`,
        errors: `${bad(g1) + bad(g2)}/${bad(h1) + bad(h2)}`,
      });
    }
    console.log(
      `\nbackend benchmark: ${CONNECTIONS} connections, 2 runs of ${SECONDS} s per app (ABBA), 2 uvicorn workers each, PostgreSQL on 127.0.0.1`,
    );
    console.table(rows);
    console.log("targets: GET by id and list >= 1.00x, create >= 0.90x (ratio = generated / hand-written)");
    await generated.stop();
    await handwritten.stop();
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

await main();
