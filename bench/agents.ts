/**
 * Events dispatcher and agents benchmark, on the generated backend of the test domain
 * test/fixtures/backend/notes_agents (a `labeler` agent subscribed to note_created), PostgreSQL,
 * the fake OpenAI-compatible server answering at once:
 *  - dispatch throughput: 2,000 pending events (written while the agents were off), then the time
 *    until every one is delivered and its agent run recorded, with one replica and with two;
 *  - the latency a subscribed agent adds to a create: sequential POST /notes against an app whose
 *    agent runs (dispatcher on, the model called for every note) and an app without a provider
 *    (no dispatcher), in alternating rounds; p50 and p90 of each, and the difference (target:
 *    under 1 ms at p50, the agents being off the request path).
 * Run: npm run bench -- agents
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { generateBackend, type RunningBackend, startGeneratedBackend } from "../test/support/backend.js";
import { FakeLlm, NO_PROVIDER_ENV } from "../test/support/fake-llm.js";
import { databaseUrl, freshDatabase } from "../test/support/postgres.js";

const DOMAIN = "test/fixtures/backend/notes_agents";
const EVENTS = Number(process.env.AGENTS_BENCH_EVENTS ?? 2000);
const ROUNDS = Number(process.env.AGENTS_BENCH_ROUNDS ?? 6);
const PER_ROUND = Number(process.env.AGENTS_BENCH_PER_ROUND ?? 100);
const REPLY = { json: { updates: { label: "idea", score: 5 }, confidence: 0.9 } };

function sql(db: string, query: string): string {
  return execFileSync("psql", ["-qAtX", "-v", "ON_ERROR_STOP=1", databaseUrl(db)], { input: query, encoding: "utf8" }).trim();
}

/** The same, without blocking this process (it also serves the fake model). */
async function sqlAsync(db: string, query: string): Promise<string> {
  const { stdout } = await promisify(execFile)("psql", ["-qAtX", "-c", query, databaseUrl(db)], { encoding: "utf8" });
  return stdout.trim();
}

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

async function post(url: string, body: unknown): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`${url}/notes`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  if (r.status !== 201) throw new Error(`POST /notes answered ${r.status}`);
  return performance.now() - t0;
}

async function dispatchRun(outDir: string, db: string, fake: FakeLlm, replicas: number): Promise<number> {
  sql(
    db,
    "UPDATE events SET dispatched_at = NULL, parked_at = NULL, attempts = 0, claimed_by = NULL, available_at = now(); DELETE FROM agent_runs;",
  );
  for (let i = 0; i < EVENTS + 100; i++) fake.reply(REPLY);
  const env = fake.env({ DISPATCH_POLL_SECONDS: "0.05", DISPATCH_BATCH_SIZE: "64", DATABASE_POOL_SIZE: "20" });
  const options = { domainDir: DOMAIN, outDir, backend: "postgres" as const, databaseUrl: databaseUrl(db), env, skipGenerate: true };
  const apps = await Promise.all(Array.from({ length: replicas }, () => startGeneratedBackend(options)));
  try {
    for (;;) {
      if ((await sqlAsync(db, "SELECT count(*) FROM events WHERE dispatched_at IS NULL")) === "0") break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const runs = sql(db, "SELECT count(*) FROM agent_runs WHERE decision = 'applied'");
    if (runs !== String(EVENTS)) throw new Error(`expected ${EVENTS} applied runs, found ${runs}`);
    // The span of the work itself (first run started to last event settled), not the start-up of the apps.
    const seconds = Number(
      sql(db, "SELECT extract(epoch FROM (SELECT max(dispatched_at) FROM events) - (SELECT min(started_at) FROM agent_runs))"),
    );
    return EVENTS / seconds;
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
    fake.reset();
  }
}

async function main(): Promise<void> {
  const outDir = mkdtempSync(join(tmpdir(), "charter-bench-agents-"));
  const fake = await FakeLlm.start();
  const apps: RunningBackend[] = [];
  try {
    generateBackend(DOMAIN, outDir);
    const db = freshDatabase("charter_bench_agents_dispatch");
    // The events are written with the agents off: nothing consumes them until the replicas start.
    const writer = await startGeneratedBackend({
      domainDir: DOMAIN,
      outDir,
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      env: NO_PROVIDER_ENV,
      skipGenerate: true,
    });
    for (let i = 0; i < EVENTS; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, k) => post(writer.url, { title: `Note ${i + k}`, body: "text" })));
    }
    await writer.stop();
    console.log(`dispatch throughput (${EVENTS} events, each running the labelling agent against the fake model):`);
    const one = await dispatchRun(outDir, db, fake, 1);
    console.log(`  1 replica:  ${one.toFixed(0)} events/s`);
    const two = await dispatchRun(outDir, db, fake, 2);
    console.log(`  2 replicas: ${two.toFixed(0)} events/s (x${(two / one).toFixed(2)} of one replica)`);

    // Create latency: the same app with the agent subscribed and without a provider.
    const dbOn = freshDatabase("charter_bench_agents_on");
    const dbOff = freshDatabase("charter_bench_agents_off");
    for (let i = 0; i < ROUNDS * PER_ROUND + 200; i++) fake.reply(REPLY);
    const common = { domainDir: DOMAIN, outDir, backend: "postgres" as const, skipGenerate: true };
    const on = await startGeneratedBackend({ ...common, databaseUrl: databaseUrl(dbOn), env: fake.env({ DISPATCH_POLL_SECONDS: "0.05" }) });
    apps.push(on);
    const off = await startGeneratedBackend({ ...common, databaseUrl: databaseUrl(dbOff), env: NO_PROVIDER_ENV });
    apps.push(off);
    const samples: Record<"on" | "off", number[]> = { on: [], off: [] };
    for (const [url] of [[on.url], [off.url]]) for (let i = 0; i < 30; i++) await post(url as string, { title: `warm ${i}` });
    for (let round = 0; round < ROUNDS; round++) {
      // ABBA order: neither side always runs first.
      const order = round % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const);
      for (const side of order) {
        const url = side === "on" ? on.url : off.url;
        for (let i = 0; i < PER_ROUND; i++) samples[side].push(await post(url, { title: `Round ${round} note ${i}`, body: "some text" }));
      }
    }
    const agentRuns = sql(dbOn, "SELECT count(*) FROM agent_runs");
    const stats = (xs: number[]): { p50: number; p90: number } => {
      const s = [...xs].sort((a, b) => a - b);
      return { p50: percentile(s, 50), p90: percentile(s, 90) };
    };
    const a = stats(samples.on);
    const b = stats(samples.off);
    console.log(
      `create latency, ${ROUNDS * PER_ROUND} sequential POST /notes per side (agent runs recorded on the agent side: ${agentRuns}):`,
    );
    console.log(`  agent subscribed: p50 ${a.p50.toFixed(2)} ms, p90 ${a.p90.toFixed(2)} ms`);
    console.log(`  no agent:         p50 ${b.p50.toFixed(2)} ms, p90 ${b.p90.toFixed(2)} ms`);
    console.log(`  added by the agent at p50: ${(a.p50 - b.p50).toFixed(2)} ms (target < 1 ms)`);
    console.log("(figures from a shared machine: compare the sides of one run, not runs)");
  } finally {
    await Promise.all(apps.map((x) => x.stop()));
    await fake.close();
    rmSync(outDir, { recursive: true, force: true });
  }
}

await main();
