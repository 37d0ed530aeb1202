import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend, type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { FakeLlm } from "../support/fake-llm.js";
import { until } from "../support/poll.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { client } from "./http.js";

const DOMAIN = "test/fixtures/backend/notes_agents";
const EVENTS = 1000;
const BATCH = 32;
const REPLY_OK = { json: { updates: { label: "idea", score: 5 }, confidence: 0.9 } };

function sql(db: string, query: string): string[][] {
  return psql(db, query, ["-tA"])
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.split("|"));
}

function count(db: string, query: string): number {
  return Number(sql(db, query)[0]?.[0]);
}

/**
 * Two processes of the generated app share one PostgreSQL outbox. Each of 1,000 notes fires the
 * labelling agent once (note_created); one process is killed with SIGKILL while it holds claimed
 * events. Every event must be delivered (none lost, none parked) and every agent applied exactly once
 * per event: a note the model was asked about twice is one whose first claim died with its replica.
 */
describe("events dispatcher: two replicas on one PostgreSQL, one killed mid-way", () => {
  let fake: FakeLlm;
  let a: RunningBackend;
  let b: RunningBackend;
  let outDir: string;
  let db: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "charter-replicas-"));
    db = freshDatabase("charter_dispatch_replicas");
    fake = await FakeLlm.start();
    // Each reply takes 300 ms, so a replica always has a batch in flight when it is killed.
    for (let i = 0; i < EVENTS + 200; i++) fake.reply({ delayMs: 300, json: { updates: { label: "idea", score: 5 }, confidence: 0.9 } });
    generateBackend(DOMAIN, outDir);
    const env = fake.env({
      DISPATCH_LEASE_SECONDS: "16",
      SVC_AI_TIMEOUT: "5",
      DISPATCH_POLL_SECONDS: "0.1",
      DISPATCH_BATCH_SIZE: String(BATCH),
      DATABASE_POOL_SIZE: "20",
    });
    const options = { domainDir: DOMAIN, outDir, backend: "postgres" as const, databaseUrl: databaseUrl(db), env, skipGenerate: true };
    a = await startGeneratedBackend(options);
    b = await startGeneratedBackend(options);
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await fake?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  it("delivers 1,000 events, each applied exactly once, none lost after a SIGKILL", async () => {
    const apps = [client(a.url), client(b.url)];
    // Notes are created through both processes, ten at a time.
    for (let start = 0; start < EVENTS; start += 10) {
      const created = await Promise.all(
        Array.from({ length: 10 }, (_, k) => {
          const n = start + k;
          return apps[n % 2]?.post("/notes", { title: `Note ${String(n).padStart(4, "0")}`, body: "text" });
        }),
      );
      for (const r of created) expect(r?.status).toBe(201);
    }
    // Kill A while it holds claimed, unfinished events (and after both have done some work).
    const claimedByA = `claimed_by LIKE '%:${a.pid}:%'`;
    await until(async () =>
      count(db, `SELECT count(*) FROM events WHERE ${claimedByA} AND dispatched_at IS NULL`) > 0 &&
      count(db, `SELECT count(*) FROM events WHERE ${claimedByA} AND dispatched_at IS NOT NULL`) > 0
        ? true
        : undefined,
    );
    process.kill(-a.pid, "SIGKILL");
    const inFlight = count(db, `SELECT count(*) FROM events WHERE ${claimedByA} AND dispatched_at IS NULL`);
    expect(inFlight).toBeGreaterThan(0);

    // B alone finishes everything, A's leased events included once their lease ran out.
    await until(async () => (count(db, "SELECT count(*) FROM events WHERE dispatched_at IS NULL") === 0 ? true : undefined), 180_000);
    expect(count(db, "SELECT count(*) FROM events")).toBe(EVENTS);
    expect(count(db, "SELECT count(*) FROM events WHERE parked_at IS NOT NULL OR name <> 'note_created'")).toBe(0);
    // Both replicas delivered events.
    expect(count(db, "SELECT count(DISTINCT claimed_by) FROM events")).toBe(2);
    // Exactly one finished run per event, every one applied.
    expect(sql(db, "SELECT decision, count(*), count(DISTINCT event_id) FROM agent_runs GROUP BY decision")).toEqual([
      ["applied", String(EVENTS), String(EVENTS)],
    ]);
    expect(count(db, "SELECT count(*) FROM notes WHERE label = 'idea' AND score = 5")).toBe(EVENTS);
    // What A held when it died was delivered again (a lease can also run out on a busy machine).
    const retried = sql(db, "SELECT n.title FROM events e JOIN notes n ON n.id = e.record_id WHERE e.attempts > 1").map((r) => r[0]);
    expect(retried.length).toBeGreaterThanOrEqual(inFlight);
    // The model was asked about a note twice only when that note's event was redelivered.
    const asked = new Map<string, number>();
    for (let i = 0; i < fake.requests.length; i++) {
      const title = /Note \d{4}/.exec(fake.userPrompt(i))?.[0] ?? "?";
      asked.set(title, (asked.get(title) ?? 0) + 1);
    }
    expect(asked.size).toBe(EVENTS);
    const twice = [...asked.entries()].filter(([, n]) => n > 1).map(([t]) => t);
    for (const title of twice) expect(retried).toContain(title);
    expect(Math.max(...asked.values())).toBeLessThanOrEqual(2);
  });
});

describe("labelling agent on memory: invoke side effect, fallback that sets values, route rules", () => {
  let fake: FakeLlm;
  let app: RunningBackend;
  let outDir: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "charter-notes-"));
    fake = await FakeLlm.start();
    app = await startGeneratedBackend({
      domainDir: DOMAIN,
      outDir,
      backend: "memory",
      env: fake.env({ DISPATCH_POLL_SECONDS: "0.1", DISPATCH_BACKOFF_SECONDS: "0.1", DISPATCH_MAX_ATTEMPTS: "2" }),
    });
  });

  afterAll(async () => {
    await app?.stop();
    await fake?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  // biome-ignore lint/suspicious/noExplicitAny: JSON checked field by field.
  const runs = (id: string, n: number): Promise<any[]> =>
    until(async () => {
      // biome-ignore lint/suspicious/noExplicitAny: as above.
      const items = (await client(app.url).get(`/notes/${id}/agent-runs`)).body.items.filter((r: any) => r.decision !== "running");
      return items.length >= n ? items : undefined;
    });

  it("runs the fallback's set values below the threshold, and again when PATCH invokes the agent", async () => {
    const api = client(app.url);
    fake.reply({ json: { updates: { label: "bug" }, confidence: 0.2 } });
    const note = await api.post("/notes", { title: "Maybe a bug", label: "todo" });
    expect(note.status).toBe(201);
    const [first] = await runs(note.body.id, 1);
    expect(first).toMatchObject({ event: "note_created", decision: "fallback", changes: { label: "unsorted" } });
    expect((await api.get(`/notes/${note.body.id}`)).body.label).toBe("unsorted");

    // PATCH's side effect `invoke: agent/notes/labeler` runs the agent for the record.
    fake.reply({ json: { updates: { label: "bug", score: 3 }, confidence: 0.7 } });
    expect((await api.patch(`/notes/${note.body.id}`, { body: "it crashes" })).status).toBe(200);
    const latest = await runs(note.body.id, 2);
    expect(latest[0]).toMatchObject({ event: "invoke:agent/notes/labeler", decision: "applied", changes: { label: "bug", score: 3 } });
    expect((await api.get(`/notes/${note.body.id}`)).body).toMatchObject({ label: "bug", score: 3 });
  });

  it("a change the route's PATCH rule refuses is not applied: the fallback runs instead", async () => {
    const api = client(app.url);
    fake.reply({ json: { updates: { label: "idea", score: 9 }, confidence: 0.99 } });
    const note = await api.post("/notes", { title: "Score me high" });
    const [run] = await runs(note.body.id, 1);
    expect(run.decision).toBe("fallback");
    expect(run.error).toContain("score");
    expect((await api.get(`/notes/${note.body.id}`)).body).toMatchObject({ label: "unsorted", score: null });
  });
});

describe("events dispatcher on PostgreSQL: retries with backoff, then parks (kept, visible)", () => {
  let fake: FakeLlm;
  let app: RunningBackend;
  let outDir: string;
  let db: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "charter-park-"));
    db = freshDatabase("charter_dispatch_park");
    fake = await FakeLlm.start();
    app = await startGeneratedBackend({
      domainDir: DOMAIN,
      outDir,
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      env: fake.env({ DISPATCH_POLL_SECONDS: "0.1", DISPATCH_BACKOFF_SECONDS: "0.2", DISPATCH_MAX_ATTEMPTS: "3" }),
    });
    // A handler that fails for one record: recording its agent run raises in the database.
    psql(
      db,
      `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF EXISTS (SELECT 1 FROM notes WHERE id = NEW.record_id AND title LIKE 'poison%') THEN
           RAISE EXCEPTION 'poisoned note';
         END IF;
         RETURN NEW;
       END $$;
       CREATE TRIGGER refuse_poison BEFORE INSERT ON agent_runs FOR EACH ROW EXECUTE FUNCTION refuse_poison();`,
    );
  });

  afterAll(async () => {
    await app?.stop();
    await fake?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  it("parks the failing event after 3 attempts with its error; the record's next event still runs", async () => {
    const api = client(app.url);
    fake.reply(REPLY_OK, REPLY_OK);
    const poison = (await api.post("/notes", { title: "poison pill" })).body;
    const fine = (await api.post("/notes", { title: "a fine note" })).body;
    const parked = await until(async () => {
      const rows = sql(
        db,
        `SELECT attempts, parked_at IS NOT NULL, dispatched_at IS NULL, last_error FROM events WHERE record_id = '${poison.id}'`,
      );
      return rows[0]?.[1] === "t" ? rows[0] : undefined;
    });
    expect(parked.slice(0, 3)).toEqual(["3", "t", "t"]);
    expect(parked[3]).toContain("poisoned note");
    // The other record was not held up, and nothing ran the agent for the poisoned one.
    const fineRun = `SELECT decision FROM agent_runs WHERE record_id = '${fine.id}' AND decision <> 'running'`;
    expect(await until(async () => (sql(db, fineRun).length > 0 ? sql(db, fineRun) : undefined))).toEqual([["applied"]]);
    expect(count(db, `SELECT count(*) FROM agent_runs WHERE record_id = '${poison.id}'`)).toBe(0);

    // Once the fault is gone, the record's next event (PATCH invokes the agent) is delivered: a
    // parked event no longer holds back the events after it.
    psql(db, "DROP TRIGGER refuse_poison ON agent_runs;");
    expect((await api.patch(`/notes/${poison.id}`, { body: "now fine" })).status).toBe(200);
    const finished = `SELECT count(*) FROM agent_runs WHERE record_id = '${poison.id}' AND decision <> 'running'`;
    await until(async () => (count(db, finished) === 1 ? true : undefined));
    expect(sql(db, `SELECT event, decision FROM agent_runs WHERE record_id = '${poison.id}'`)).toEqual([
      ["invoke:agent/notes/labeler", "applied"],
    ]);
    expect(count(db, "SELECT count(*) FROM events WHERE parked_at IS NOT NULL")).toBe(1);
  });

  it("delivers one record's events in order: each agent run starts after the previous one finished", async () => {
    const api = client(app.url);
    // Slow replies: were the three events of one record handed out together, their runs would overlap.
    for (let i = 0; i < 3; i++) fake.reply({ delayMs: 300, json: { updates: { score: i + 1 }, confidence: 0.9 } });
    const note = (await api.post("/notes", { title: "in order" })).body;
    expect((await api.patch(`/notes/${note.id}`, { body: "first edit" })).status).toBe(200);
    expect((await api.patch(`/notes/${note.id}`, { body: "second edit" })).status).toBe(200);
    const finished = `SELECT count(*) FROM agent_runs WHERE record_id = '${note.id}' AND decision <> 'running'`;
    await until(async () => (count(db, finished) === 3 ? true : undefined));
    const runs = sql(
      db,
      `SELECT r.event, e.seq, extract(epoch FROM r.started_at), extract(epoch FROM r.finished_at)
       FROM agent_runs r JOIN events e ON e.id = r.event_id WHERE r.record_id = '${note.id}' ORDER BY r.started_at`,
    );
    expect(runs.map((r) => r[0])).toEqual(["note_created", "invoke:agent/notes/labeler", "invoke:agent/notes/labeler"]);
    const seqs = runs.map((r) => Number(r[1]));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    for (let i = 1; i < runs.length; i++) expect(Number(runs[i]?.[2])).toBeGreaterThanOrEqual(Number(runs[i - 1]?.[3]));
    // The last run's reply is the record's final word.
    expect((await api.get(`/notes/${note.id}`)).body.score).toBe(3);
  });
});
