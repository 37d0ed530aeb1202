import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain, type DomainIR } from "../../src/compiler/index.js";
import { generateTarget, readExisting, writeFiles } from "../../src/generators/index.js";
import { generateMigrations, parseSnapshot, SnapshotError } from "../../src/generators/migrations/index.js";
import { MIGRATIONS_DIR, SNAPSHOT_PATH } from "../../src/generators/postgres/types.js";
import { applyScript, describeSchema, query, scalar, startLikeApp } from "../postgres/db.js";
import { REPO_ROOT, runCharter } from "../support/cli.js";
import { expectGolden } from "../support/golden.js";
import { freshDatabase } from "../support/postgres.js";

const V1 = "test/fixtures/migrations/v1";
const V2 = "test/fixtures/migrations/v2";

function compile(path: string): DomainIR {
  const r = checkDomain(resolve(REPO_ROOT, path));
  if (r.ir === null) throw new Error(`${path} does not compile: ${JSON.stringify(r.findings)}`);
  return r.ir;
}

/** Generates the migrations target into `out` (reading what is there), as `forge generate` does. */
function generate(ir: DomainIR, out: string): string[] {
  return writeFiles(out, generateTarget(ir, "migrations", out)).written;
}

function migrationFiles(out: string): string[] {
  return readdirSync(join(out, MIGRATIONS_DIR)).sort();
}

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

describe("migrations target: files", () => {
  it("matches the golden first migration and snapshot of the helpdesk example", () => {
    const files = generateMigrations({ ir: compile("examples/helpdesk"), existing: new Map() });
    expectGolden(resolve(REPO_ROOT, "test/golden/migrations/helpdesk"), files);
  });

  it("makes the first migration the full idempotent schema, the same SQL as schema.sql", () => {
    const ir = compile("examples/helpdesk");
    const migration = generateMigrations({ ir, existing: new Map() }).find((f) => f.path.endsWith("0001_initial.sql"));
    const schema = generateTarget(ir, "postgres", tmpdir())[0];
    const body = (s: string): string => s.slice(s.indexOf("\n\n"));
    expect(migration && schema && body(migration.content)).toBe(schema && body(schema.content));
  });

  it("generates the same bytes twice, and nothing new when nothing changed", () => {
    const ir = compile("examples/helpdesk");
    const first = generateMigrations({ ir, existing: new Map() });
    expect(generateMigrations({ ir, existing: new Map() })).toEqual(first);
    const existing = new Map(first.map((f) => [f.path, f.content]));
    expect(generateMigrations({ ir, existing })).toEqual(first.filter((f) => f.path === SNAPSHOT_PATH));

    const out = tempDir("charter-mig-twice-");
    expect(generate(ir, out)).toEqual([`${MIGRATIONS_DIR}0001_initial.sql`, SNAPSHOT_PATH]);
    expect(generate(ir, out)).toEqual([]);
    expect(migrationFiles(out)).toEqual(["0001_initial.sql", "snapshot.json"]);
  });

  it("refuses an unreadable snapshot with a message that names the file and the way out", () => {
    const existing = new Map([[SNAPSHOT_PATH, "{ not json"]]);
    expect(() => generateMigrations({ ir: compile("examples/helpdesk"), existing })).toThrow(SnapshotError);
    expect(() => parseSnapshot('{"version": 99}')).toThrow(/snapshot\.json.*version 99.*delete it/);
  });
});

/**
 * The whole story: v1 in production with data, the contracts change (a field added, one renamed
 * with renamed_from, an entity added, one dropped, a table renamed with spec.table, a type widened
 * and one narrowed, enums and workflow states changed, auth added), `forge generate` writes one
 * migration, the app applies it on start, and every row is still there.
 */
describe("migrations target: v1 -> v2 on a real PostgreSQL", () => {
  let out: string;
  let db: string;
  let cli: { status: number; stdout: string; stderr: string };

  beforeAll(() => {
    out = tempDir("charter-mig-evolve-");
    db = freshDatabase("charter_test_migrations_evolve");
    const first = runCharter(["forge", "generate", V1, "--target", "migrations", "--output", out]);
    expect(first.status, first.stderr).toBe(0);
    expect(runCharter(["forge", "generate", V1, "--target", "postgres", "--output", out]).status).toBe(0);
    expect(startLikeApp(db, out)).toEqual(["0001_initial"]);
    applyScript(
      db,
      `INSERT INTO customers (id, number, name, company, website, plan, score) VALUES
         ('00000000-0000-0000-0000-0000000000c1', 'CUS-00001', 'Acme', 'Acme Inc', 'https://acme.test', 'pro', 7),
         ('00000000-0000-0000-0000-0000000000c2', 'CUS-00002', 'Bob', NULL, NULL, 'free', NULL);
       INSERT INTO support_agents (id, name) VALUES ('00000000-0000-0000-0000-0000000000a1', 'Alice');
       INSERT INTO tickets (id, number, title, priority, estimate, customer_id, assignee_id, state) VALUES
         ('00000000-0000-0000-0000-0000000000f1', 'TKT-00001', 'Printer on fire', 'high', 2.6, '00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000a1', 'new'),
         ('00000000-0000-0000-0000-0000000000f2', 'TKT-00002', 'Password reset', 'low', NULL, '00000000-0000-0000-0000-0000000000c2', NULL, 'closed');
       INSERT INTO notes (body, ticket_id) VALUES ('Called the customer', '00000000-0000-0000-0000-0000000000f1');`,
    );
    // The contracts change; the user regenerates both database targets, then restarts the app.
    cli = runCharter(["forge", "generate", V2, "--target", "migrations", "--output", out]);
    expect(cli.status, cli.stderr).toBe(0);
    expect(runCharter(["forge", "generate", V2, "--target", "postgres", "--output", out]).status).toBe(0);
  });

  it("writes one numbered migration named after the change, and the new snapshot", () => {
    expect(migrationFiles(out)).toEqual([
      "0001_initial.sql",
      "0002_drop_notes_and_rename_support_agents_to_agents_and_more.sql",
      "snapshot.json",
    ]);
    expect(parseSnapshot(readFileSync(join(out, SNAPSHOT_PATH), "utf8")).migration).toBe(
      "0002_drop_notes_and_rename_support_agents_to_agents_and_more",
    );
    const files = [...readExisting(out, [MIGRATIONS_DIR])].map(([path, content]) => ({ path, content }));
    expectGolden(resolve(REPO_ROOT, "test/golden/migrations/evolve"), files);
  });

  it("flags every destructive step in the file and on the command line", () => {
    const file = "backend/db/migrations/0002_drop_notes_and_rename_support_agents_to_agents_and_more.sql";
    const warnings = cli.stdout.split("\n").filter((l) => l.includes("WARNING"));
    expect(warnings).toEqual([
      `${file}: WARNING destructive: drop table notes (all its rows are lost)`,
      `${file}: WARNING destructive: drop column customers.website (its data is lost)`,
      `${file}: WARNING review: customers.segment is required without a default; added as nullable, NOT NULL enforced only when the table is empty`,
      `${file}: WARNING destructive: customers.company becomes NOT NULL; rows holding NULL get the default 'unknown'`,
      `${file}: WARNING destructive: narrow tickets.estimate from DOUBLE PRECISION to BIGINT (values may be rounded, truncated or fail to convert)`,
    ]);
    const sql = readFileSync(join(out, file), "utf8");
    expect(sql).toContain('ALTER TABLE "tickets" RENAME COLUMN "title" TO "subject";');
    expect(sql).toContain('ALTER TABLE "support_agents" RENAME TO "agents";');
    expect(sql).not.toMatch(/DROP COLUMN IF EXISTS "title"|ADD COLUMN IF NOT EXISTS "subject"/);
    expect(sql).not.toMatch(/\bBEGIN;|\bCOMMIT;/);
    // A widening (integer -> number) changes the type without a warning.
    expect(sql).toContain('ALTER TABLE "customers" ALTER COLUMN "score" SET DATA TYPE DOUBLE PRECISION');
  });

  it("applies on start and keeps every row", () => {
    expect(startLikeApp(db, out)).toEqual(["0002_drop_notes_and_rename_support_agents_to_agents_and_more"]);
    expect(query(db, "SELECT version FROM schema_migrations ORDER BY version")).toEqual([
      "0001_initial",
      "0002_drop_notes_and_rename_support_agents_to_agents_and_more",
    ]);
    expect(
      query(
        db,
        "SELECT number || '|' || name || '|' || company || '|' || plan || '|' || coalesce(score::text, '-') || '|' || coalesce(segment, '-') FROM customers ORDER BY number",
      ),
    ).toEqual(["CUS-00001|Acme|Acme Inc|pro|7|-", "CUS-00002|Bob|unknown|free|-|-"]);
    expect(
      query(
        db,
        "SELECT number || '|' || subject || '|' || priority || '|' || severity || '|' || coalesce(estimate::text, '-') || '|' || state || '|' || coalesce(assignee_id::text, '-') FROM tickets ORDER BY number",
      ),
    ).toEqual([
      "TKT-00001|Printer on fire|high|minor|3|new|00000000-0000-0000-0000-0000000000a1",
      "TKT-00002|Password reset|low|minor|-|closed|-",
    ]);
    expect(query(db, "SELECT name FROM agents")).toEqual(["Alice"]);
    expect(query(db, "SELECT to_regclass('notes')::text IS NULL AND to_regclass('support_agents')::text IS NULL")).toEqual(["t"]);
    expect(scalar(db, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'customers' AND column_name = 'website'")).toBe(
      "0",
    );
  });

  it("updates the CHECKs of changed enums and states and keeps renamed constraints", () => {
    applyScript(
      db,
      `UPDATE tickets SET priority = 'urgent', state = 'on_hold' WHERE number = 'TKT-00001';
       INSERT INTO products (name) VALUES ('Widget');
       UPDATE tickets SET product_id = (SELECT id FROM products) WHERE number = 'TKT-00001';
       INSERT INTO auth_users (id, email, role) VALUES ('admin', 'admin@example.com', 'admin');`,
    );
    expect(() => applyScript(db, "UPDATE tickets SET priority = 'whenever'")).toThrow(/ck_tickets_priority_enum/);
    expect(() => applyScript(db, "UPDATE tickets SET subject = 'ab'")).toThrow(/ck_tickets_subject_min_length/);
    expect(() => applyScript(db, "UPDATE tickets SET estimate = -1")).toThrow(/ck_tickets_estimate_min/);
    expect(() => applyScript(db, "DELETE FROM agents")).not.toThrow();
    expect(query(db, "SELECT count(*) FROM tickets WHERE assignee_id IS NOT NULL")).toEqual(["0"]);
  });

  it("leaves the database with the schema a fresh schema.sql builds, but for the NOT NULL it could not enforce", () => {
    const fresh = freshDatabase("charter_test_migrations_fresh");
    applyScript(fresh, readFileSync(join(out, "backend/db/schema.sql"), "utf8"));
    const migrated = describeSchema(db);
    const expected = describeSchema(fresh);
    const onlyIn = (a: string[], b: string[]): string[] => a.filter((x) => !b.includes(x));
    expect(onlyIn(migrated, expected)).toEqual(["column customers.segment text nullable=YES default=-"]);
    expect(onlyIn(expected, migrated)).toEqual(["column customers.segment text nullable=NO default=-"]);
  });

  it("writes nothing when the contracts have not changed since", () => {
    const again = runCharter(["forge", "generate", V2, "--target", "migrations", "--output", out]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain("migrations: 1 files, 0 written, 1 unchanged");
    expect(again.stdout).not.toContain("WARNING");
    expect(migrationFiles(out)).toHaveLength(3);
    expect(startLikeApp(db, out)).toEqual([]);
  });
});
