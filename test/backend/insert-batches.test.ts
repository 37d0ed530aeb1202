import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { runCasesInBackend } from "../support/python.js";
import { client } from "./http.js";

/**
 * Creates that arrive together are written by one multi-row INSERT (app/repositories/batches.py,
 * PostgresRepository.create). Each request must still get what it would get on its own: its own
 * record and number, its events, and an error only when its own row is at fault.
 */
const contract = (kind: string, name: string, spec: string) =>
  `apiVersion: charter/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\n  domain: club\nspec:\n${spec}`;
const FILES: Record<string, string> = {
  "entities/team.contract.yaml": contract(
    "Entity",
    "team",
    "  mixins: [mixin/stdlib/identifiable, mixin/stdlib/timestamped]\n  fields:\n    name: { type: string, required: true }\n",
  ),
  "entities/member.contract.yaml": contract(
    "Entity",
    "member",
    [
      "  number_prefix: MEM",
      "  mixins: [mixin/stdlib/identifiable, mixin/stdlib/timestamped]",
      "  fields:",
      "    email: { type: email, required: true }",
      "    nickname: { type: string }",
      "    team: { type: uuid, references: { entity: entity/club/team } }",
      "",
    ].join("\n"),
  ),
  "routes/team_api.contract.yaml": contract(
    "Route",
    "team_api",
    "  entity: entity/club/team\n  endpoints:\n    - { method: GET, path: / }\n    - { method: POST, path: / }\n",
  ),
  "routes/member_api.contract.yaml": contract(
    "Route",
    "member_api",
    [
      "  entity: entity/club/member",
      "  endpoints:",
      "    - { method: GET, path: / }",
      '    - { method: GET, path: "/{id}" }',
      "    - { method: POST, path: /, side_effects: [{ emit_event: member_joined }] }",
      "",
    ].join("\n"),
  ),
};

const CASES = `
import asyncio

from app.repositories.batches import FIGURES, InsertBatches


class Refused(Exception):
    pass


async def main():
    sent = []

    async def write(key, rows):
        sent.append(len(rows))
        await asyncio.sleep(0)
        if any(row[0] == "bad" for row in rows):
            raise Refused("a row the database refuses")
        if any(row[0] == "down" for row in rows):
            raise OSError("the connection broke")
        return [{"key": key, "value": row[0]} for row in rows]

    # No room: every create waits for the end of the turn (the repository gives room for one).
    batches = InsertBatches(write, lambda key: 8, (Refused,), room=0)

    assert (await batches.insert("k", [0]))["value"] == 0 and sent == [1]
    print("alone_is_sent_alone")

    sent.clear()
    before = (FIGURES.statements, FIGURES.rows)
    results = await asyncio.gather(*(batches.insert("k", [i]) for i in range(13)))
    assert [r["value"] for r in results] == list(range(13)), results
    assert sent == [8, 4, 1], sent
    assert (FIGURES.statements, FIGURES.rows) == (before[0] + 2, before[1] + 12)
    print("thirteen_go_as_eight_four_and_one")

    sent.clear()
    results = await asyncio.gather(batches.insert("a", [1]), batches.insert("b", [2]), batches.insert("a", [3]))
    assert [(r["key"], r["value"]) for r in results] == [("a", 1), ("b", 2), ("a", 3)]
    assert sorted(sent) == [1, 2], sent
    print("keys_never_share_a_statement")

    sent.clear()
    outcomes = await asyncio.gather(
        *(batches.insert("k", ["bad" if i == 2 else i]) for i in range(4)), return_exceptions=True
    )
    assert isinstance(outcomes[2], Refused), outcomes
    assert [o["value"] for i, o in enumerate(outcomes) if i != 2] == [0, 1, 3], outcomes
    assert sent == [4, 1, 1, 1, 1], sent
    print("a_faulty_row_fails_only_its_request")

    sent.clear()
    outcomes = await asyncio.gather(
        *(batches.insert("k", ["down" if i == 0 else i]) for i in range(4)), return_exceptions=True
    )
    assert all(isinstance(o, OSError) for o in outcomes), outcomes
    assert sent == [4], sent
    print("another_failure_is_every_answer_and_is_not_retried")

    gate = asyncio.Event()
    written = []

    async def slow(key, rows):
        await gate.wait()
        written.extend(row[0] for row in rows)
        return [{"value": row[0]} for row in rows]

    waiting = InsertBatches(slow, lambda key: 8, (Refused,), room=0)
    tasks = [asyncio.ensure_future(waiting.insert("k", [i])) for i in range(3)]
    await asyncio.sleep(0.05)
    tasks[0].cancel()
    gate.set()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(outcomes[0], asyncio.CancelledError), outcomes
    assert [o["value"] for o in outcomes[1:]] == [1, 2], outcomes
    assert sorted(written) == [0, 1, 2], written
    print("a_cancelled_request_leaves_its_row_in_the_chunk")

    written.clear()
    tasks = [asyncio.ensure_future(waiting.insert("k", [i])) for i in range(3)]
    await asyncio.sleep(0)
    tasks[0].cancel()  # the first, which sends the group at the end of the turn
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(outcomes[0], asyncio.CancelledError), outcomes
    assert [o["value"] for o in outcomes[1:]] == [1, 2], outcomes
    assert sorted(written) == [0, 1, 2], written
    print("a_cancelled_first_still_sends_its_group")

    sent.clear()
    roomy = InsertBatches(write, lambda key: 8, (Refused,), room=1)
    results = await asyncio.gather(*(roomy.insert("k", [i]) for i in range(4)))
    assert [r["value"] for r in results] == [0, 1, 2, 3], results
    assert sent == [1, 2, 1], sent
    sent.clear()
    outcome = await asyncio.gather(roomy.insert("k", ["bad"]), return_exceptions=True)
    assert isinstance(outcome[0], Refused) and sent == [1], (outcome, sent)
    print("with_room_the_first_goes_at_once_and_the_rest_of_the_turn_together")


asyncio.run(main())
`;

describe("creates written together, on a real PostgreSQL", () => {
  let root: string;
  let app: RunningBackend;
  let db: string;
  let sql: pg.Client;
  const api = () => client(app.url);
  const batched = async (url: string): Promise<number> => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = /^db_batched_creates_total (\S+)$/m.exec(text);
    if (!line) throw new Error(`no db_batched_creates_total in /metrics:\n${text.slice(0, 2000)}`);
    return Number(line[1]);
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "charter-insert-batches-"));
    const domain = join(root, "domain");
    for (const [path, text] of Object.entries(FILES)) {
      mkdirSync(join(domain, path, ".."), { recursive: true });
      writeFileSync(join(domain, path), text);
    }
    db = freshDatabase("charter_test_insert_batches");
    app = await startGeneratedBackend({
      domainDir: domain,
      outDir: join(root, "out"),
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      workers: 1,
    });
    sql = new pg.Client({ connectionString: databaseUrl(db) });
    await sql.connect();
  }, 600_000);

  afterAll(async () => {
    await sql?.end();
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("chunks, isolates faults and survives cancels (the batching alone, with a fake writer)", () => {
    expect(runCasesInBackend(app.backendDir, "batch_cases.py", CASES)).toEqual([
      "alone_is_sent_alone",
      "thirteen_go_as_eight_four_and_one",
      "keys_never_share_a_statement",
      "a_faulty_row_fails_only_its_request",
      "another_failure_is_every_answer_and_is_not_retried",
      "a_cancelled_request_leaves_its_row_in_the_chunk",
      "a_cancelled_first_still_sends_its_group",
      "with_room_the_first_goes_at_once_and_the_rest_of_the_turn_together",
    ]);
  });

  it("gives each of many concurrent creates its own record, number and event", async () => {
    const team = (await api().post("/teams", { name: "red" })).body.id as string;
    const bodies: Record<string, string>[] = [];
    const replies: { status: number; body: Record<string, unknown> }[] = [];
    // Concurrent requests land in the same turn of the app's event loop often, not always: a few
    // rounds make sure some were written together.
    for (let round = 0; round < 5 && (replies.length === 0 || (await batched(app.url)) === 0); round++) {
      const sent = Array.from({ length: 60 }, (_, i) => ({
        email: `m${round}-${i}@example.com`,
        ...(i % 2 ? { nickname: `nick ${i}` } : {}),
        ...(i % 3 ? { team } : {}),
      }));
      bodies.push(...sent);
      replies.push(...(await Promise.all(sent.map((body) => api().post("/members", body)))));
    }
    expect(await batched(app.url)).toBeGreaterThan(1);
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 201));
    // Each request gets the record made of its own body, whichever row of the INSERT it was.
    expect(replies.map((r) => [r.body.email, r.body.nickname ?? null, r.body.team ?? null])).toEqual(
      bodies.map((b) => [b.email, b.nickname ?? null, b.team ?? null]),
    );
    const ids = replies.map((r) => r.body.id);
    expect(new Set(ids).size).toBe(replies.length);
    const numbers = replies.map((r) => r.body.number);
    expect(new Set(numbers).size).toBe(replies.length);
    for (const n of numbers) expect(n).toMatch(/^MEM-\d+$/);
    // Each answer is its own record, as stored.
    for (const r of replies.slice(0, 60)) {
      const stored = await api().get(`/members/${r.body.id}`);
      expect(stored.status).toBe(200);
      expect(stored.body).toEqual(r.body);
    }
    const events = await sql.query("SELECT record_id::text AS id, data->>'email' AS email FROM events WHERE name = 'member_joined'");
    expect(events.rows.length).toBe(replies.length);
    const emails = new Map(replies.map((r) => [r.body.id, r.body.email]));
    for (const e of events.rows) expect(e.email).toBe(emails.get(e.id));
  });

  it("answers 409 only to the requests whose own row breaks a constraint", async () => {
    // A constraint of the database's own (a DBA's index) and a reference to no record.
    await sql.query("CREATE UNIQUE INDEX members_email_unique ON members (email)");
    const taken = (await api().post("/members", { email: "taken@example.com" })).status;
    expect(taken).toBe(201);
    const missingTeam = "00000000-0000-4000-8000-000000000000";
    const bodies = Array.from({ length: 40 }, (_, i) =>
      i === 5 || i === 17
        ? { email: "taken@example.com" }
        : i === 9 || i === 30
          ? { email: `orphan-${i}@example.com`, team: missingTeam }
          : { email: `fine-${i}@example.com` },
    );
    const replies = await Promise.all(bodies.map((b) => api().post("/members", b)));
    const failed = replies.flatMap((r, i) => (r.status === 201 ? [] : [[i, r.status, r.body.error]]));
    expect(failed).toEqual([
      [5, 409, "conflict"],
      [9, 409, "conflict"],
      [17, 409, "conflict"],
      [30, 409, "conflict"],
    ]);
    const stored = await sql.query("SELECT email FROM members WHERE email LIKE 'fine-%' OR email LIKE 'orphan-%'");
    expect(stored.rows.map((r) => r.email).sort()).toEqual(
      bodies
        .filter((_, i) => ![5, 9, 17, 30].includes(i))
        .map((b) => b.email)
        .sort(),
    );
    expect((await sql.query("SELECT count(*)::int AS n FROM members WHERE email = 'taken@example.com'")).rows[0].n).toBe(1);
  });

  it("writes each create on its own with DATABASE_BATCH_CREATES=false", async () => {
    const single = await startGeneratedBackend({
      domainDir: join(root, "domain"),
      outDir: join(root, "out"),
      skipGenerate: true,
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      env: { DATABASE_BATCH_CREATES: "false" },
    });
    try {
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => client(single.url).post("/members", { email: `single-${i}@example.com` })),
      );
      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 201));
      expect(await batched(single.url)).toBe(0);
    } finally {
      await single.stop();
    }
  });
});
