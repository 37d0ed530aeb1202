import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { client } from "./http.js";

/*
 * The duration field type end to end: the library fixture's `book.loan_period` (ISO 8601) is an
 * INTERVAL column on PostgreSQL, a timedelta in the app, and ISO 8601 text on the wire. Values go
 * in and out through the API on both stores; on PostgreSQL the column is read back with SQL too.
 */
const LIBRARY = "test/fixtures/frontend/library";

describe.each(["memory", "postgres"] as const)("duration fields on the %s store", (store) => {
  let root: string;
  let app: RunningBackend;
  let db = "";
  const api = () => client(app.url);
  let authorId = "";

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `charter-duration-${store}-`));
    if (store === "postgres") db = freshDatabase("charter_test_duration_field");
    app = await startGeneratedBackend({
      domainDir: LIBRARY,
      outDir: join(root, "out"),
      backend: store,
      ...(store === "postgres" ? { databaseUrl: databaseUrl(db) } : {}),
      workers: 1,
    });
    const author = await api().post("/authors/", { full_name: "Ursula K. Le Guin" });
    expect(author.status, JSON.stringify(author.body)).toBe(201);
    authorId = author.body.id;
  }, 600_000);

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const book = (loan_period: unknown) => ({ title: "The Dispossessed", author_id: authorId, loan_period });

  it("stores an ISO 8601 duration and returns it, normalised, on create, read, list and update", async () => {
    const created = await api().post("/books/", book("PT36H"));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.loan_period).toBe("P1DT12H");
    const id = created.body.id as string;
    expect((await api().get(`/books/${id}`)).body.loan_period).toBe("P1DT12H");
    const listed = await api().get("/books/?limit=100");
    expect(listed.body.items.find((b: { id: string }) => b.id === id)?.loan_period).toBe("P1DT12H");

    const updated = await api().patch(`/books/${id}`, { loan_period: "P14DT0.5S" });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.loan_period).toBe("P14DT0.5S");
    expect((await api().get(`/books/${id}`)).body.loan_period).toBe("P14DT0.5S");

    if (store === "postgres") {
      const sql = new pg.Client({ connectionString: databaseUrl(db) });
      await sql.connect();
      try {
        const column = await sql.query(
          "SELECT data_type FROM information_schema.columns WHERE table_name = 'books' AND column_name = 'loan_period'",
        );
        expect(column.rows[0]?.data_type).toBe("interval");
        const row = await sql.query("SELECT extract(epoch FROM loan_period)::float8 AS s FROM books WHERE id = $1", [id]);
        expect(row.rows[0]?.s).toBe(14 * 86400 + 0.5);
      } finally {
        await sql.end();
      }
    }

    const cleared = await api().patch(`/books/${id}`, { loan_period: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.loan_period).toBeNull();
  });

  it("refuses what is not an ISO 8601 duration of days and times, naming the field", async () => {
    for (const bad of ["P1Y", "P2M", "3 days", "01:30:00", 90, "PT", true]) {
      const r = await api().post("/books/", book(bad));
      expect(r.status, `${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`).toBe(422);
      expect(JSON.stringify(r.body)).toContain("loan_period");
    }
  });

  it("declares the field in the OpenAPI document as a duration with its pattern", async () => {
    const doc = (await api().get("/openapi.json")).body;
    const schemas = doc.components.schemas as Record<string, { properties?: Record<string, unknown> }>;
    const create = JSON.stringify(schemas.BookCreate?.properties?.loan_period);
    expect(create).toContain('"format":"duration"');
    expect(create).toContain("pattern");
  });
});
