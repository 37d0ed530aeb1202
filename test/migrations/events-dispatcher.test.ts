import { describe, expect, it } from "vitest";
import { checkDomain, type DomainIR } from "../../src/compiler/index.js";
import { generateMigrations, serializeSnapshot } from "../../src/generators/migrations/index.js";
import { convertStatements } from "../../src/generators/postgres/convertor.js";
import { buildSchemaModel, type SchemaModel } from "../../src/generators/postgres/model.js";
import { createSchemaStatements } from "../../src/generators/postgres/statements.js";
import { SNAPSHOT_PATH } from "../../src/generators/postgres/types.js";
import { applyScript, query, scalar } from "../postgres/db.js";
import { freshDatabase } from "../support/postgres.js";

function helpdesk(): DomainIR {
  const { ir, findings } = checkDomain("examples/helpdesk");
  if (!ir) throw new Error(findings.map((f) => f.message).join("\n"));
  return ir;
}

/** The schema of a project generated before the dispatcher: the six-column outbox, no agent_runs. */
function before(ir: DomainIR): SchemaModel {
  const model = buildSchemaModel(ir);
  const old = ["id", "name", "entity", "record_id", "data", "occurred_at"];
  return {
    sequences: model.sequences.filter((s) => s !== "events_seq_seq"),
    tables: model.tables
      .filter((t) => t.name !== "agent_runs")
      .map((t) =>
        t.name === "events"
          ? {
              ...t,
              columns: t.columns.filter((c) => old.includes(c.name)),
              indexes: t.indexes.filter((i) => i.name === "ix_events_occurred_at"),
            }
          : t,
      ),
  };
}

describe("migration of an existing project to the events dispatcher", () => {
  it("adds the dispatcher's columns with defaults (numbering the stored events) and creates agent_runs", () => {
    const ir = helpdesk();
    const old = before(ir);
    const existing = new Map([
      [SNAPSHOT_PATH, serializeSnapshot({ migration: "0001_initial", schema: old })],
      ["backend/db/migrations/0001_initial.sql", "-- applied"],
    ]);
    const [migration] = generateMigrations({ ir, existing });
    expect(migration?.path).toMatch(/^backend\/db\/migrations\/0002_[a-z0-9_]+\.sql$/);
    const sql = migration?.content ?? "";
    expect(sql).toContain('CREATE SEQUENCE IF NOT EXISTS "events_seq_seq"');
    expect(sql).toContain(`ADD COLUMN IF NOT EXISTS "seq" BIGINT NOT NULL DEFAULT nextval('events_seq_seq')`);
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "agent_runs"');
    expect(migration?.warnings ?? []).toEqual([]);

    // On a database holding events written by the old app, nothing is lost and every row is numbered.
    const db = freshDatabase("charter_migrate_dispatcher");
    applyScript(db, convertStatements(createSchemaStatements(old)));
    applyScript(
      db,
      "INSERT INTO events (id, name, entity, data) VALUES (gen_random_uuid(), 'ticket_created', 'ticket', '{}'), (gen_random_uuid(), 'ticket_updated', 'ticket', '{}');",
    );
    applyScript(db, sql);
    expect(query(db, "SELECT name, seq IS NOT NULL, attempts, dispatched_at IS NULL FROM events ORDER BY seq")).toEqual([
      "ticket_created|t|0|t",
      "ticket_updated|t|0|t",
    ]);
    expect(scalar(db, "SELECT count(*) FROM agent_runs")).toBe("0");
    // New rows written the old way (six columns) get their number from the sequence.
    applyScript(db, "INSERT INTO events (id, name, entity, data) VALUES (gen_random_uuid(), 'later', 'ticket', '{}');");
    expect(scalar(db, "SELECT name FROM events ORDER BY seq DESC LIMIT 1")).toBe("later");
  });
});
