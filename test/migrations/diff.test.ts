import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDomain, type DomainIR, type EntityIR, type FieldIR } from "../../src/compiler/index.js";
import { readExisting, writeFiles } from "../../src/generators/index.js";
import { columnRenames, diffSchemas, generateMigrations, migrationSlug } from "../../src/generators/migrations/index.js";
import { serializeSnapshot } from "../../src/generators/migrations/snapshot.js";
import { convertStatements, statementWarning } from "../../src/generators/postgres/convertor.js";
import { buildSchemaModel } from "../../src/generators/postgres/model.js";
import { createSchemaStatements, type Statement } from "../../src/generators/postgres/statements.js";
import { MIGRATIONS_DIR, SNAPSHOT_PATH } from "../../src/generators/postgres/types.js";
import { applyScript, describeSchema, query, startLikeApp } from "../postgres/db.js";
import { REPO_ROOT } from "../support/cli.js";
import { freshDatabase } from "../support/postgres.js";

/**
 * One contract change at a time, on the helpdesk example: each test edits a copy of the IR the way
 * a contract edit would, checks the statements of the diff, then applies the migration to a real
 * database at the previous version holding data.
 */
const BASE = (() => {
  const r = checkDomain(resolve(REPO_ROOT, "examples/helpdesk"));
  if (r.ir === null) throw new Error("examples/helpdesk does not compile");
  return r.ir;
})();

function edit(change: (ir: DomainIR) => void): DomainIR {
  const ir = structuredClone(BASE);
  change(ir);
  return ir;
}

function entity(ir: DomainIR, name: string): EntityIR {
  const e = ir.entities.find((x) => x.name === name);
  if (!e) throw new Error(`no entity ${name}`);
  return e;
}

function field(ir: DomainIR, entityName: string, name: string): FieldIR {
  const f = entity(ir, entityName).fields.find((x) => x.name === name);
  if (!f) throw new Error(`no field ${entityName}.${name}`);
  return f;
}

function diff(before: DomainIR, after: DomainIR): Statement[] {
  return diffSchemas(buildSchemaModel(before), buildSchemaModel(after), columnRenames(after));
}

const kinds = (sts: readonly Statement[]): string[] => sts.map((s) => s.type);
const warnings = (sts: readonly Statement[]): string[] => sts.map(statementWarning).filter((w): w is string => w !== null);

const SEED = `
  INSERT INTO customers (id, number, name, email) VALUES ('00000000-0000-0000-0000-0000000000c1', 'CUS-00001', 'Acme', 'ops@acme.test');
  INSERT INTO support_agents (id, name, email, max_open_tickets) VALUES ('00000000-0000-0000-0000-0000000000a1', 'Alice', 'alice@example.com', 12);
  INSERT INTO tickets (id, number, title, priority, customer_id, assignee_id, story_points, estimate_hours, due_date, escalated, custom_data)
    VALUES ('00000000-0000-0000-0000-0000000000f1', 'TKT-00001', 'Printer on fire', 'low', '00000000-0000-0000-0000-0000000000c1',
            '00000000-0000-0000-0000-0000000000a1', 5, 1.5, '2026-11-30', true, '{"floor": 3}');`;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Builds a database at `before` (first migration) holding SEED, generates the next migration for
 * `after` and applies it the way the app does. Returns the migration's SQL and the database.
 */
function migrate(name: string, before: DomainIR, after: DomainIR): { sql: string; db: string; path: string } {
  const out = mkdtempSync(join(tmpdir(), `charter-diff-${name}-`));
  dirs.push(out);
  const db = freshDatabase(`charter_test_diff_${name}`);
  writeFiles(out, generateMigrations({ ir: before, existing: new Map() }));
  startLikeApp(db, out);
  applyScript(db, SEED);
  const files = generateMigrations({ ir: after, existing: readExisting(out, [MIGRATIONS_DIR]) });
  const migration = files.find((f) => f.path.endsWith(".sql"));
  if (!migration) throw new Error("no migration generated");
  writeFiles(out, files);
  startLikeApp(db, out);
  return { sql: migration.content, db, path: migration.path };
}

/** The schema a database built from scratch for `ir` has. */
function freshSchema(name: string, ir: DomainIR): string[] {
  const db = freshDatabase(`charter_test_diff_${name}_fresh`);
  const first = generateMigrations({ ir, existing: new Map() })[0];
  applyScript(db, first?.content ?? "");
  return describeSchema(db);
}

describe("migration diff", () => {
  it("adds idempotency_keys to a project generated before the table existed, keeping its rows", () => {
    const out = mkdtempSync(join(tmpdir(), "charter-diff-idempotency-"));
    dirs.push(out);
    // The project as it was: its first migration and snapshot, from a schema without the table.
    const now = buildSchemaModel(BASE);
    const schema = { ...now, tables: now.tables.filter((t) => t.name !== "idempotency_keys") };
    const older = [
      { path: `${MIGRATIONS_DIR}0001_initial.sql`, content: convertStatements(createSchemaStatements(schema)) },
      { path: SNAPSHOT_PATH, content: serializeSnapshot({ migration: "0001_initial", schema }) },
    ];
    expect(older[0]?.content).not.toContain("idempotency_keys");
    writeFiles(out, older);
    const db = freshDatabase("charter_test_diff_idempotency");
    startLikeApp(db, out);
    applyScript(db, SEED);
    const files = generateMigrations({ ir: BASE, existing: readExisting(out, [MIGRATIONS_DIR]) });
    const migration = files.find((f) => f.path.endsWith(".sql"));
    expect(migration?.path).toBe("backend/db/migrations/0002_create_idempotency_keys.sql");
    expect(migration?.content).toContain("idempotency_keys");
    writeFiles(out, files);
    startLikeApp(db, out);
    expect(query(db, "SELECT count(*) FROM tickets")).toEqual(["1"]);
    expect(describeSchema(db)).toEqual(freshSchema("idempotency", BASE));
  });

  it("finds no change between a schema and itself", () => {
    expect(diff(BASE, structuredClone(BASE))).toEqual([]);
  });

  it("renames a table whose spec.table changed, with its keys, checks and indexes, keeping rows", () => {
    const after = edit((ir) => {
      entity(ir, "agent").table = "agents";
    });
    const sts = diff(BASE, after);
    expect(kinds(sts)).toEqual([
      "rename_table",
      "rename_constraint",
      "rename_constraint",
      "rename_constraint",
      "rename_constraint",
      "rename_index",
    ]);
    expect(warnings(sts)).toEqual([]);
    const { db, path } = migrate("table_rename", BASE, after);
    expect(path).toBe("backend/db/migrations/0002_rename_support_agents_to_agents.sql");
    expect(query(db, "SELECT name || '|' || max_open_tickets FROM agents")).toEqual(["Alice|12"]);
    expect(query(db, "SELECT count(*) FROM tickets WHERE assignee_id IS NOT NULL")).toEqual(["1"]);
    expect(describeSchema(db)).toEqual(freshSchema("table_rename", after));
  });

  it("renames a column declared with renamed_from instead of dropping it, and only once", () => {
    const after = edit((ir) => {
      const f = field(ir, "ticket", "title");
      f.name = "subject";
      f.renamedFrom = "title";
    });
    const sts = diff(BASE, after);
    expect(kinds(sts)).toEqual(["rename_column", "rename_constraint", "rename_constraint"]);
    expect(migrationSlug(sts)).toBe("rename_tickets_title_to_subject");
    const { db } = migrate("column_rename", BASE, after);
    expect(query(db, "SELECT subject FROM tickets")).toEqual(["Printer on fire"]);
    expect(describeSchema(db)).toEqual(freshSchema("column_rename", after));
    // renamed_from stays in the contract; once applied it means nothing more.
    expect(diff(after, after)).toEqual([]);
  });

  it("names a migration by whole words: too long a name drops whole changes and names, never part of one", () => {
    const rename = { type: "rename_column", table: "customers", from: "company_name", to: "organisation_name" } as Statement;
    const longRename = {
      type: "rename_column",
      table: "customers",
      from: "company_legal_name",
      to: "organisation_legal_name",
    } as Statement;
    const drop = { type: "drop_column", table: "customers", column: "legacy_identifier" } as Statement;
    expect(migrationSlug([rename])).toBe("rename_customers_company_name_to_organisation_name");
    // 66 characters: the second change goes, then the words of the first from its end.
    expect(migrationSlug([longRename])).toBe("rename_customers_company_legal_name");
    expect(migrationSlug([rename, drop])).toBe("rename_customers_company_name_to_organisation_name_and_more");
    expect(migrationSlug([drop, rename])).toBe("drop_customers_legacy_identifier_and_more");
    expect(migrationSlug([drop, rename])).toBe(migrationSlug([drop, rename]));
    for (const slug of [migrationSlug([longRename, drop, rename]), migrationSlug([rename, drop])]) {
      expect(slug.length).toBeLessThanOrEqual(60);
      expect(slug).not.toMatch(/_to$|_and$/);
    }
  });

  it("changes types: widenings pass silently, narrowings are flagged destructive, data is converted", () => {
    const after = edit((ir) => {
      field(ir, "ticket", "story_points").type = "number"; // BIGINT -> DOUBLE PRECISION
      field(ir, "ticket", "due_date").type = "datetime"; // DATE -> TIMESTAMPTZ
      field(ir, "ticket", "custom_data").type = "text"; // JSONB -> TEXT
      field(ir, "ticket", "estimate_hours").type = "integer"; // DOUBLE PRECISION -> BIGINT
      Object.assign(field(ir, "ticket", "escalated"), { type: "integer", default: 0 }); // BOOLEAN -> BIGINT
    });
    const sts = diff(BASE, after);
    expect(warnings(sts)).toEqual([
      "destructive: narrow tickets.estimate_hours from DOUBLE PRECISION to BIGINT (values may be rounded, truncated or fail to convert)",
      "destructive: narrow tickets.escalated from BOOLEAN to BIGINT (values may be rounded, truncated or fail to convert)",
    ]);
    const { db, sql } = migrate("types", BASE, after);
    expect(sql).toContain("-- charter: WARNING destructive: narrow tickets.estimate_hours");
    expect(
      query(
        db,
        "SELECT story_points || '|' || to_char(due_date, 'YYYY-MM-DD') || '|' || custom_data || '|' || estimate_hours || '|' || escalated FROM tickets",
      ),
    ).toEqual(['5|2026-11-30|{"floor": 3}|2|1']);
    expect(describeSchema(db)).toEqual(freshSchema("types", after));
  });

  it("replaces the CHECK of a changed enum or workflow, flagging only the changes existing rows may fail", () => {
    const widened = edit((ir) => {
      field(ir, "ticket", "priority").enum = ["low", "medium", "high", "critical", "urgent"];
      field(ir, "ticket", "state").enum = [...(field(ir, "ticket", "state").enum ?? []), "archived"];
    });
    const sts = diff(BASE, widened);
    expect(kinds(sts)).toEqual(["drop_check", "drop_check", "add_check", "add_check"]);
    expect(warnings(sts)).toEqual([]);
    const { db } = migrate("enum", BASE, widened);
    applyScript(db, "UPDATE tickets SET priority = 'urgent', state = 'archived'");
    expect(() => applyScript(db, "UPDATE tickets SET priority = 'someday'")).toThrow(/ck_tickets_priority_enum/);

    const narrowed = edit((ir) => {
      field(ir, "ticket", "priority").enum = ["medium", "high", "critical"];
    });
    expect(warnings(diff(BASE, narrowed))).toEqual(["review: existing rows of tickets must satisfy ck_tickets_priority_enum"]);
  });

  it("adds a required field without a default to a table with rows without failing, and flags it", () => {
    const after = edit((ir) => {
      const title = field(ir, "ticket", "title");
      entity(ir, "ticket").fields.push({ ...structuredClone(title), name: "severity", constraints: {}, enum: ["minor", "major"] });
      const email = field(ir, "agent", "email");
      entity(ir, "customer").fields.push({ ...structuredClone(email), name: "vat_id" });
    });
    const sts = diff(BASE, after);
    expect(migrationSlug(sts)).toBe("add_customers_vat_id_and_add_tickets_severity");
    expect(warnings(sts)).toEqual([
      "review: customers.vat_id is required without a default; added as nullable, NOT NULL enforced only when the table is empty",
      "review: tickets.severity is required without a default; added as nullable, NOT NULL enforced only when the table is empty",
    ]);
    const { db } = migrate("required", BASE, after);
    expect(query(db, "SELECT count(*) FROM tickets WHERE severity IS NULL")).toEqual(["1"]);
    expect(() => applyScript(db, "UPDATE tickets SET severity = 'none'")).toThrow(/ck_tickets_severity_enum/);
  });

  it("drops an entity and the references to it, flagging the loss", () => {
    const after = edit((ir) => {
      ir.entities = ir.entities.filter((e) => e.name !== "agent");
      const t = entity(ir, "ticket");
      t.fields = t.fields.filter((f) => f.name !== "assignee_id");
    });
    const sts = diff(BASE, after);
    expect(kinds(sts)).toEqual(["drop_foreign_key", "drop_table", "drop_column"]);
    expect(warnings(sts)).toEqual([
      "destructive: drop table support_agents (all its rows are lost)",
      "destructive: drop column tickets.assignee_id (its data is lost)",
    ]);
    const { db } = migrate("drop", BASE, after);
    expect(query(db, "SELECT title FROM tickets")).toEqual(["Printer on fire"]);
    expect(describeSchema(db)).toEqual(freshSchema("drop", after));
  });
});
