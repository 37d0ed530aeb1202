/**
 * Events dispatcher and agents benchmark, on the generated backend of the test domain
 * test/fixtures/backend/notes_agents (a `labeler` agent subscribed to note_created), PostgreSQL,
 * the fake OpenAI-compatible server answering at once:
 *  - dispatch throughput: 2,000 pending events (written while the agents were off), then the time
 *    until every one is delivered and its agent run recorded, with one replica and with two;
 *  - the latency a subscribed agent adds to a create: sequential POST /notes against an app whose
 *    agent runs (dispatcher on, the model called for every note) and an app without a provider
 *    (no dispatcher), and the agent side again with its events worker stopped (SIGSTOP), in rotating
 *    rounds; p50 and p90 of each. The difference on/off is the whole cost (target: under 1 ms at
 *    p50); paused/off is what the request path itself adds, the rest being the agents' CPU in the
 *    worker process, which on a busy machine competes with the requests.
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
type Side = "on" | "off" | "paused";
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
    const samples: Record<Side, number[]> = { on: [], off: [], paused: [] };
    // The agent side's events worker (a child process of the app): stopped during the `paused`
    // rounds, so that those measure the request path alone, without the agents' CPU next to it.
    const worker = Number(
      execFileSync("pgrep", ["-P", String(on.pid), "-f", "app.worker"], { encoding: "utf8" })
        .trim()
        .split("\n")[0],
    );
    for (const [url] of [[on.url], [off.url]]) for (let i = 0; i < 30; i++) await post(url as string, { title: `warm ${i}` });
    const sides: Side[] = ["on", "off", "paused"];
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates: no side always runs first.
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(round + k) % sides.length] as Side;
        const url = side === "off" ? off.url : on.url;
        if (side === "paused") process.kill(worker, "SIGSTOP");
        try {
          for (let i = 0; i < PER_ROUND; i++) samples[side].push(await post(url, { title: `Round ${round} note ${i}`, body: "some text" }));
        } finally {
          if (side === "paused") process.kill(worker, "SIGCONT");
        }
      }
    }
    const stats = (xs: number[]): { p50: number; p90: number } => {
      const s = [...xs].sort((a, b) => a - b);
      return { p50: percentile(s, 50), p90: percentile(s, 90) };
    };
    const [a, b, c] = [stats(samples.on), stats(samples.off), stats(samples.paused)];
    console.log(`create latency, ${ROUNDS * PER_ROUND} sequential POST /notes per side:`);
    console.log(`  agent subscribed:                 p50 ${a.p50.toFixed(2)} ms, p90 ${a.p90.toFixed(2)} ms`);
    console.log(`  agent subscribed, worker stopped: p50 ${c.p50.toFixed(2)} ms, p90 ${c.p90.toFixed(2)} ms`);
    console.log(`  no agent:                         p50 ${b.p50.toFixed(2)} ms, p90 ${b.p90.toFixed(2)} ms`);
    console.log(
      `  added at p50 by the agent: ${(a.p50 - b.p50).toFixed(2)} ms in all (target < 1 ms), of which the request path: ${(c.p50 - b.p50).toFixed(2)} ms`,
    );
    console.log("  (the rest is the agents' own work, in the worker process, sharing the machine's CPUs)");
    console.log("(figures from a shared machine: compare the sides of one run, not runs)");
  } finally {
    await Promise.all(apps.map((x) => x.stop()));
    await fake.close();
    rmSync(outDir, { recursive: true, force: true });
  }
}

await main();
