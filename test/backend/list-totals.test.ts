import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { runCasesInBackend } from "../support/python.js";
import { client } from "./http.js";

/**
 * The total of an unfiltered list is kept between writes (app/repositories/postgres.py, the
 * row_versions sequence and triggers of schema.sql): counted once, reused until a write to the table
 * advances the version. These tests write through the API and around it (psql-style, from another
 * connection), hold transactions open across lists, and race writers against readers; whatever
 * they do, a list must answer the exact total of what is committed.
 */
const NOTE = `apiVersion: charter/v1
kind: Entity
metadata:
  name: note
  domain: bench
spec:
  mixins:
    - mixin/stdlib/identifiable
    - mixin/stdlib/soft_deletable
  fields:
    body:
      type: string
      required: true
`;
const NOTE_API = `apiVersion: charter/v1
kind: Route
metadata:
  name: note_api
  domain: bench
spec:
  entity: entity/bench/note
  endpoints:
    - { method: GET, path: / }
    - { method: POST, path: / }
    - { method: DELETE, path: "/{id}" }
`;

describe("list totals kept between writes, on a real PostgreSQL", () => {
  let root: string;
  let app: RunningBackend;
  let db: string;
  let sql: pg.Client;
  const api = () => client(app.url);
  const total = async (path: string): Promise<number> => {
    const r = await api().get(`${path}?limit=1`);
    expect(r.status).toBe(200);
    return r.body.total;
  };
  const counted = async (table: string, where = ""): Promise<number> =>
    (await sql.query(`SELECT count(*)::int AS n FROM ${table}${where}`)).rows[0].n;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "charter-list-totals-"));
    const domain = join(root, "domain");
    cpSync("bench/backend-domain", domain, { recursive: true });
    writeFileSync(join(domain, "entities/note.contract.yaml"), NOTE);
    mkdirSync(join(domain, "routes"), { recursive: true });
    writeFileSync(join(domain, "routes/note_api.contract.yaml"), NOTE_API);
    db = freshDatabase("charter_test_list_totals");
    app = await startGeneratedBackend({
      domainDir: domain,
      outDir: join(root, "out"),
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      // One process: which totals it keeps then follows from the order of the lists alone (each
      // process keeps its own, and the lists below would otherwise land on either).
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

  it("follows every kind of write, through the API or around it", async () => {
    const check = async () => {
      // Several lists in a row: the second keeps the total, the others answer from it.
      for (let i = 0; i < 6; i++) expect(await total("/items")).toBe(await counted("items"));
    };
    await check();
    for (let i = 0; i < 3; i++) expect((await api().post("/items", { name: `via api ${i}` })).status).toBe(201);
    await check();
    await sql.query("INSERT INTO items (name) SELECT 'around ' || g FROM generate_series(1, 5) g");
    await check();
    await sql.query("DELETE FROM items WHERE name LIKE 'around %'");
    await check();
    // A write that is rolled back changes nothing, though it advanced the version.
    await sql.query("BEGIN");
    await sql.query("DELETE FROM items");
    await sql.query("ROLLBACK");
    await check();
    await sql.query("TRUNCATE items CASCADE");
    await check();
    expect(await total("/items")).toBe(0);
  });

  it("counts soft deletes, made through the API or by an UPDATE of the flag", async () => {
    const alive = ' WHERE "is_deleted" IS NOT TRUE';
    const check = async () => {
      for (let i = 0; i < 6; i++) expect(await total("/notes")).toBe(await counted("notes", alive));
    };
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await api().post("/notes", { body: `note ${i}` })).body.id);
    await check();
    expect((await api().delete(`/notes/${ids[0]}`)).status).toBe(204);
    await check();
    await sql.query(`UPDATE notes SET "is_deleted" = true WHERE id = $1`, [ids[1]]);
    await check();
    await sql.query(`UPDATE notes SET "is_deleted" = false WHERE id = $1`, [ids[1]]);
    await check();
    expect(await total("/notes")).toBe(3);
  });

  it("never keeps a count that missed a write in progress", async () => {
    // Rows to list: the total comes with the first row (an empty page counts on its own).
    await sql.query("INSERT INTO items (name) SELECT 'listed ' || g FROM generate_series(1, 3) g");
    await total("/items");
    const writer = new pg.Client({ connectionString: databaseUrl(db) });
    await writer.connect();
    try {
      const before = await counted("items");
      // The insert has advanced the version; it is not committed while the lists below count.
      await writer.query("BEGIN");
      await writer.query("INSERT INTO items (name) VALUES ('in progress')");
      for (let i = 0; i < 6; i++) expect(await total("/items")).toBe(before);
      await writer.query("COMMIT");
      // A count kept from the lists above would still say `before`.
      for (let i = 0; i < 6; i++) expect(await total("/items")).toBe(before + 1);
      // An older transaction still running behind a newer one that has ended: the lists' snapshots
      // hold it among their in-progress ids (xip), not past their xmax as above.
      await writer.query("BEGIN");
      await writer.query("INSERT INTO items (name) VALUES ('older')");
      await sql.query("INSERT INTO items (name) VALUES ('newer')");
      for (let i = 0; i < 6; i++) expect(await total("/items")).toBe(before + 2);
      await writer.query("COMMIT");
      for (let i = 0; i < 6; i++) expect(await total("/items")).toBe(before + 3);
    } finally {
      await writer.end();
    }
  });

  it("reuses the total while the table is unchanged: a write the triggers do not see is not seen", async () => {
    const before = await counted("items");
    for (let i = 0; i < 6; i++) expect(await total("/items")).toBe(before);
    // Proof that the lists answer from the kept total: a row inserted with the version's trigger
    // switched off is not in it. This is why the app only keeps totals for tables whose trigger is
    // enabled when it starts, and why the trigger must stay on.
    await sql.query("ALTER TABLE items DISABLE TRIGGER row_versions_bumped");
    try {
      await sql.query("INSERT INTO items (name) VALUES ('unseen')");
    } finally {
      await sql.query("ALTER TABLE items ENABLE TRIGGER row_versions_bumped");
    }
    for (let i = 0; i < 6; i++) expect(await total("/items")).toBe(before);
    await sql.query("INSERT INTO items (name) VALUES ('seen')");
    for (let i = 0; i < 6; i++) expect(await total("/items")).toBe(before + 2);
  });

  it("is exact once writers racing the readers stop", async () => {
    let writing = true;
    const writer = async (n: number) => {
      const c = new pg.Client({ connectionString: databaseUrl(db) });
      await c.connect();
      try {
        for (let i = 0; writing; i++) {
          // Transactions of a few statements that stay open a moment while the lists count.
          await c.query("BEGIN");
          await c.query("INSERT INTO items (name) SELECT $1 || g FROM generate_series(1, 3) g", [`race ${n}.${i}.`]);
          await new Promise((r) => setTimeout(r, Math.random() * 8));
          if (i % 3 === 2) await c.query("DELETE FROM items WHERE id IN (SELECT id FROM items WHERE name LIKE 'race %' LIMIT 2)");
          await c.query(Math.random() < 0.2 ? "ROLLBACK" : "COMMIT");
        }
      } finally {
        await c.end();
      }
    };
    const reader = async () => {
      const seen: number[] = [];
      while (writing) seen.push(await total("/items"));
      return seen;
    };
    const writers = [0, 1, 2].map(writer);
    const readers = [reader(), reader(), reader(), reader()];
    await new Promise((r) => setTimeout(r, 4000));
    writing = false;
    await Promise.all(writers);
    const reads = (await Promise.all(readers)).flat();
    expect(reads.length).toBeGreaterThan(50);
    const exact = await counted("items");
    for (let i = 0; i < 12; i++) expect(await total("/items")).toBe(exact);
  }, 60_000);

  it("keeps a count only when the version was read by a list that ended before it", () => {
    // The condition no race above can reach reliably: a write made between the statement's
    // snapshot and its read of the version. The list that reads the version must not keep a count
    // (its snapshot may lack that write) unless an earlier list had already read the same version.
    const script = `
from app.repositories.postgres import PostgresRepository
import app.domain as domain

meta = next(m for m in domain.ENTITIES if m.table == "items")
repo = PostgresRepository(meta, None, versioned=True)  # type: ignore[arg-type]

def row(version, total, quiet):
    return {"__version": version, "__total": total, "__quiet": quiet}

# First list: version 7 was never seen before the statement; the count is answered, not kept.
assert repo._kept(row(7, 100, True), None, -1) == 100
assert repo._kept_total is None
# Second list: 7 was seen before it was sent, and its snapshot saw nothing in progress: kept.
assert repo._kept(row(7, 100, True), None, 7) == 100
assert repo._kept_total == (7, 100)
print("kept_after_a_second_read")
# A hit: the statement found version 7 unchanged and counted nothing.
assert repo._kept(row(7, None, None), (7, 100), 7) == 100
print("hit_answers_the_kept_total")
# The version moved (8), seen was 7: answered, not kept; nor with a transaction in progress.
assert repo._kept(row(8, 101, True), (7, 100), 7) == 101
assert repo._kept_total == (7, 100)
assert repo._kept(row(8, 101, False), (7, 100), 8) == 101
assert repo._kept_total == (7, 100)
assert repo._kept(row(8, 101, True), (7, 100), 8) == 101
assert repo._kept_total == (8, 101)
print("moved_version_waits_for_a_quiet_second_read")
`;
    expect(runCasesInBackend(app.backendDir, "kept_cases.py", script)).toEqual([
      "kept_after_a_second_read",
      "hit_answers_the_kept_total",
      "moved_version_waits_for_a_quiet_second_read",
    ]);
  });
});
