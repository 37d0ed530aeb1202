/**
 * Healer benchmark, against `charter healer serve` over HTTP:
 *  - ingest throughput with wrk (a Lua script posting 50 distinct runtime reports in turn, dedup
 *    on: each has an open `proposed` ticket, made by the fake LLM during the warm-up), and a check
 *    that no report was lost (the tickets' occurrences add up to the requests answered);
 *    once on each ticket store: SQLite (the default) and PostgreSQL (HEALER_DATABASE_URL, a fresh
 *    database on 127.0.0.1:5432), with the ratio of the two;
 *  - tier 1 latency from a report to the fix applied and the code regenerated, on a 20-entity domain;
 *  - the cost of redacting one realistic runtime report (asyncpg message with its row, a
 *    traceback of 20 frames) in process: what every runtime ingest pays before it is stored.
 * Run: npm run bench -- healer (needs wrk: apt-get install wrk)
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkDomain } from "../src/compiler/index.js";
import { redactContext, redactText } from "../src/healer/index.js";
import { type HealerProcess, startHealerProcess } from "../test/healer/serve-process.js";
import { FakeLlm, NO_PROVIDER_ENV } from "../test/support/fake-llm.js";
import { databaseUrl, freshDatabase } from "../test/support/postgres.js";

const ENTITIES = 20;
const DISTINCT_ERRORS = 50;
const WRK_SECONDS = Number(process.env.HEALER_BENCH_SECONDS ?? 10);
const WRK_CONNECTIONS = Number(process.env.HEALER_BENCH_CONNECTIONS ?? 32);
const LATENCY_SAMPLES = Number(process.env.HEALER_BENCH_SAMPLES ?? 40);

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

function writeDomain(dir: string): void {
  for (const sub of ["entities", "routes", "pages"]) mkdirSync(join(dir, sub), { recursive: true });
  for (let i = 0; i < ENTITIES; i++) {
    const n = `item_${String(i).padStart(2, "0")}`;
    const ref =
      i === 0
        ? ""
        : `    parent_id:
      type: uuid
      references:
        entity: entity/bench/item_${String(i - 1).padStart(2, "0")}
        display: title
        graph_edge: CHILD_OF
`;
    writeFileSync(
      join(dir, "entities", `${n}.contract.yaml`),
      `# Entity ${i} of the benchmark domain.
apiVersion: charter/v1
kind: Entity
metadata:
  name: ${n}
  domain: bench
spec:
  number_prefix: IT
  mixins:
    - mixin/stdlib/identifiable
    - mixin/stdlib/timestamped
  fields:
    title:
      type: string
      required: true
    status:
      type: string
      enum: [open, closed]
      default: open
    amount:
      type: number
    notes:
      type: text
${ref}`,
    );
    writeFileSync(
      join(dir, "routes", `${n}_api.contract.yaml`),
      `apiVersion: charter/v1
kind: Route
metadata:
  name: ${n}_api
  domain: bench
spec:
  entity: entity/bench/${n}
  endpoints:
    - method: GET
      path: /
    - method: POST
      path: /
    - method: PATCH
      path: /{id}
`,
    );
    writeFileSync(
      join(dir, "pages", `${n}s.contract.yaml`),
      `apiVersion: charter/v1
kind: Page
metadata:
  name: ${n}s
  domain: bench
spec:
  route: /${n.replace("_", "-")}s
  entity: entity/bench/${n}
  generation_tier: mechanical
  views:
    - type: table
      default: true
      columns: [number, title, status]
`,
    );
  }
}

/** `charter healer serve` as a child process (the same helper the tests use). */
function startServer(project: string, env: Record<string, string>): Promise<HealerProcess> {
  return startHealerProcess(project, env, { quiet: true });
}

function reportBody(k: number): string {
  return JSON.stringify({
    source: "runtime",
    contract_fqn: "entity/bench/item_00",
    error: `KeyError: 'field_${k}'`,
    context: { status_code: 500, path: "/item-00s/", method: "GET" },
  });
}

/** Reports per second of one ingest run, or null when it was skipped. */
async function benchIngest(store: "sqlite" | "postgres"): Promise<number | null> {
  if (spawnSync("wrk", ["--version"]).error) {
    console.log("ingest: skipped, wrk is not installed (apt-get install wrk)");
    return null;
  }
  const storeEnv: Record<string, string> =
    store === "postgres" ? { HEALER_DATABASE_URL: databaseUrl(freshDatabase("charter_bench_healer")) } : {};
  const root = mkdtempSync(join(tmpdir(), "charter-bench-ingest-"));
  writeDomain(join(root, "domains", "bench"));
  const fake = await FakeLlm.start();
  const item = readFileSync(join(root, "domains/bench/entities/item_00.contract.yaml"), "utf8");
  const fixed = item.replace("  domain: bench\n", "  domain: bench\n  description: The first item of the benchmark\n");
  for (let k = 0; k < DISTINCT_ERRORS; k++) fake.reply({ json: { contract: fixed, explanation: "describe the entity" } });
  // The warm-up asks the fake model for 50 proposals at once: more than the default call budget.
  const server = await startServer(root, {
    ...fake.env(),
    ...storeEnv,
    SVC_HEALER_LLM_CALLS_PER_MINUTE: "1000",
    SVC_HEALER_MAX_OPEN_PROPOSALS: "1000",
  });
  try {
    // Warm-up: one report per distinct error, each becoming an open `proposed` ticket.
    for (let k = 0; k < DISTINCT_ERRORS; k++) {
      const r = await fetch(`${server.url}/healer/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: reportBody(k),
      });
      const j = (await r.json()) as { status: string };
      if (j.status !== "proposed") throw new Error(`warm-up report ${k} ended ${j.status}`);
    }
    const lua = join(root, "ingest.lua");
    const bodies = Array.from({ length: DISTINCT_ERRORS }, (_, k) => `[${k}] = [==[${reportBody(k)}]==]`).join(",\n");
    writeFileSync(
      lua,
      `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies = {
${bodies}
}
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, bodies[n % ${DISTINCT_ERRORS}])
end
done = function(summary, latency, requests)
  io.write(string.format("WRK requests=%d non2xx=%d errors=%d p50=%.2f p99=%.2f\\n",
    summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
`,
    );
    const cpuBefore = cpuMs(server.child.pid);
    const wrk = spawnSync(
      "wrk",
      ["-t1", `-c${WRK_CONNECTIONS}`, `-d${WRK_SECONDS}s`, "--latency", "-s", lua, `${server.url}/healer/ingest`],
      { encoding: "utf8" },
    );
    if (wrk.status !== 0) throw new Error(`wrk failed: ${wrk.stderr}`);
    const m = /WRK requests=(\d+) non2xx=(\d+) errors=(\d+) p50=([\d.]+) p99=([\d.]+)/.exec(wrk.stdout);
    const rps = /Requests\/sec:\s+([\d.]+)/.exec(wrk.stdout)?.[1];
    if (!m || !rps) throw new Error(`cannot read wrk's output:\n${wrk.stdout}`);
    const [requests, non2xx, errors] = [Number(m[1]), Number(m[2]), Number(m[3])];
    // Load-independent: the server's CPU per report; 1000 / it is what one free core could take.
    const cpuPerReport = (cpuMs(server.child.pid) - cpuBefore) / requests;
    await new Promise((r) => setTimeout(r, 300));
    const tickets = (await (await fetch(`${server.url}/healer/tickets`)).json()) as { occurrences: number; status: string }[];
    const occurrences = tickets.reduce((n, t) => n + t.occurrences, 0) - DISTINCT_ERRORS;
    // wrk counts answered requests; a few more may have reached the server as it stopped.
    const lost = Math.max(0, requests - non2xx - occurrences);
    console.log(
      `ingest over HTTP, ${store} store (wrk -t1 -c${WRK_CONNECTIONS} -d${WRK_SECONDS}s, ${DISTINCT_ERRORS} distinct reports, dedup on): ` +
        `${Math.round(Number(rps))} reports/s, p50 ${m[4]} ms, p99 ${m[5]} ms; ${requests} answered, ${non2xx} non-2xx, ${errors} socket errors; ` +
        `${tickets.length} tickets, ${occurrences} occurrences counted, ${lost} lost; ` +
        `server CPU ${(cpuPerReport * 1000).toFixed(0)} µs per report (${Math.round(1000 / cpuPerReport)} reports/s per free core)`,
    );
    return Number(rps);
  } finally {
    await server.stop();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux); NaN elsewhere. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * The variants of the tier 1 run, compared in the same run: "new" is the Healer as it is; "old"
 * turns off the fast paths that each have an environment switch (the parse cache, and the writer
 * trusting the files it wrote while their inode, size, mtime and ctime are unchanged).
 * HEALER_BENCH_TIER1_MODES=new,old,nocache (nocache: only the parse cache off) picks them.
 */
const TIER1_MODES: Record<string, Record<string, string>> = {
  new: {},
  old: { CHARTER_PARSE_CACHE: "off", CHARTER_WRITER_TRUST_STAT: "off" },
  nocache: { CHARTER_PARSE_CACHE: "off" },
};

/**
 * Tier 1 latency of each variant in the same run: one server and one project each, sampled in
 * turn (ABBA), so a loaded machine skews them alike. Also prints each server's CPU time per fix,
 * steadier than wall time on a shared machine.
 */
async function benchTier1(): Promise<void> {
  const modes = (process.env.HEALER_BENCH_TIER1_MODES ?? "new,old").split(",").filter((m) => m in TIER1_MODES);
  const runs = [];
  for (const mode of modes) {
    const root = mkdtempSync(join(tmpdir(), `charter-bench-tier1-${mode}-`));
    const domain = join(root, "domains", "bench");
    writeDomain(domain);
    const check = checkDomain(domain);
    if (check.errors > 0) throw new Error(`benchmark domain is invalid: ${check.findings[0]?.message}`);
    const server = await startServer(root, { ...NO_PROVIDER_ENV, ...TIER1_MODES[mode] });
    runs.push({ mode, root, domain, server, contracts: check.contracts.length, samples: [] as number[], cpu: 0, regenerated: 0 });
  }
  try {
    for (let s = -3; s < LATENCY_SAMPLES; s++) {
      const order = s % 2 === 0 ? runs : [...runs].reverse();
      for (const run of order) {
        const i = 1 + ((s + 3) % (ENTITIES - 1));
        const n = `item_${String(i).padStart(2, "0")}`;
        const file = join(run.domain, "entities", `${n}.contract.yaml`);
        const wrong = `childOf${s + 3}`;
        writeFileSync(file, readFileSync(file, "utf8").replace(/graph_edge: \w+/, `graph_edge: ${wrong}`));
        const cpuBefore = cpuMs(run.server.child.pid);
        const started = performance.now();
        const r = await fetch(`${run.server.url}/healer/ingest`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            source: "validation",
            contract_fqn: `entity/bench/${n}`,
            error: `'${wrong}' does not match '^[A-Z][A-Z0-9_]*$'`,
            context: {
              source_path: `domains/bench/entities/${n}.contract.yaml`,
              pointer: "/spec/fields/parent_id/references/graph_edge",
              code: "schema.pattern",
              schema_path: "/$defs/graphEdge/pattern",
            },
          }),
        });
        const elapsed = performance.now() - started;
        const { ticket_id, status } = (await r.json()) as { ticket_id: string; status: string };
        const cpu = cpuMs(run.server.child.pid) - cpuBefore;
        const t = (await (await fetch(`${run.server.url}/healer/tickets/${ticket_id}`)).json()) as { resolution_note: string };
        if (status !== "applied") throw new Error(`sample ${s} (${run.mode}): ticket ended ${status}: ${t.resolution_note}`);
        // The first samples load every module and write the whole runtime/ tree: warm-up.
        if (s >= 0) {
          run.samples.push(elapsed);
          run.cpu += cpu;
        }
        run.regenerated = Number(/regenerated (\d+) file/.exec(t.resolution_note)?.[1] ?? 0);
      }
    }
  } finally {
    for (const run of runs) {
      await run.server.stop();
      rmSync(run.root, { recursive: true, force: true });
    }
  }
  for (const run of runs) {
    const samples = [...run.samples].sort((a, b) => a - b);
    console.log(
      `tier 1 over HTTP, ${run.mode.padEnd(7)} (report -> applied + regenerated, ${ENTITIES} entities, ${run.contracts} contracts, ${run.regenerated} generated files): ` +
        `p50 ${percentile(samples, 50).toFixed(0)} ms, p95 ${percentile(samples, 95).toFixed(0)} ms, max ${percentile(samples, 100).toFixed(0)} ms over ${samples.length} samples; ` +
        `server CPU ${(run.cpu / samples.length).toFixed(0)} ms per fix`,
    );
  }
}

/** Median µs to redact one runtime report's message and context, over 2,000 distinct reports. */
function benchRedaction(): void {
  const frame = (i: number) =>
    `  File "/app/app/repositories/postgres.py", line ${200 + i}, in _insert\n    row = await executor.fetchrow(self._insert_sql(columns, bool(events)), *args)\n`;
  const reports = Array.from({ length: 2000 }, (_, i) => {
    const message = `asyncpg.exceptions.CheckViolationError: new row for relation "customers" violates check constraint "customers_no_example"\nDETAIL:  Failing row contains (3f0e8a52-1c1b-4e0e-9a55-${String(i).padStart(12, "0")}, Person ${i}, person${i}@example.com, Company ${i}, free, null, 2026-11-25 10:00:00+00).`;
    const stacktrace = `Traceback (most recent call last):\n${Array.from({ length: 20 }, (_, f) => frame(f)).join("")}${message}\n`;
    return { message, context: { path: "/customers/", method: "POST", status_code: 500, stacktrace } };
  });
  // Warm-up: the regular expressions compiled and the code optimised before anything is timed.
  for (const r of reports.slice(0, 500)) redactContext(r.context);
  const times: number[] = [];
  for (const r of reports) {
    const t0 = process.hrtime.bigint();
    redactText(r.message);
    redactContext(r.context);
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  const bytes = reports[0] ? reports[0].message.length + reports[0].context.stacktrace.length : 0;
  console.log(
    `redaction of one runtime report (${bytes} bytes: message with its row, 20-frame traceback): p50 ${percentile(times, 50).toFixed(0)} µs, p99 ${percentile(times, 99).toFixed(0)} µs (${reports.length} reports, in process)`,
  );
}

console.log("Healer benchmark (targets: ingest >= 5000 reports/s over HTTP with none lost, tier 1 p50 < 100 ms)");
const only = process.env.HEALER_BENCH_ONLY;
if (!only || only === "redaction") benchRedaction();
if (only !== "tier1" && only !== "redaction") {
  // HEALER_BENCH_STORES=sqlite (or postgres) runs one store only.
  const stores = (process.env.HEALER_BENCH_STORES ?? "sqlite,postgres").split(",");
  const sqlite = stores.includes("sqlite") ? await benchIngest("sqlite") : null;
  const postgres = stores.includes("postgres") ? await benchIngest("postgres") : null;
  if (sqlite && postgres) {
    console.log(`ingest, PostgreSQL store / SQLite store: ${(postgres / sqlite).toFixed(2)} (same machine, same run)`);
  }
}
if (only !== "ingest" && only !== "redaction") await benchTier1();
