import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { checkDomain, type DomainIR } from "../../src/compiler/index.js";
import { generateTarget } from "../../src/generators/index.js";
import { convertStatement } from "../../src/generators/postgres/convertor.js";
import { REPO_ROOT } from "../support/cli.js";
import { freshDatabase, PG_HOST, PG_PORT, PG_USER } from "../support/postgres.js";
import { applyScript, query, scalar } from "./db.js";

/**
 * `list_total: counter` on a real PostgreSQL: the counters the triggers keep must equal a count of
 * the rows (soft-deleted ones left out) after every kind of write, from many connections at once,
 * and schema.sql must set them up, repair them and take them away again.
 */

function helpdesk(): DomainIR {
  const r = checkDomain(resolve(REPO_ROOT, "examples/helpdesk"));
  if (r.ir === null) throw new Error(JSON.stringify(r.findings));
  return r.ir;
}

function schemaSql(ir: DomainIR): string {
  return (generateTarget(ir, "postgres", tmpdir())[0] as { content: string }).content;
}

/** The helpdesk with tickets back on `list_total: count`. */
function withoutCounters(ir: DomainIR): DomainIR {
  const copy = structuredClone(ir);
  for (const e of copy.entities) e.listTotal = "count";
  return copy;
}

const CUSTOMER = "00000000-0000-0000-0000-000000000001";

describe("row counters (list_total: counter) on a real PostgreSQL", () => {
  let db: string;
  let sql: string;
  const counted = (table = "tickets"): number =>
    Number(scalar(db, `SELECT coalesce(sum(n), -1) FROM row_counts WHERE table_name = '${table}'`));
  const alive = (): number => Number(scalar(db, "SELECT count(*) FROM tickets WHERE is_deleted IS NOT TRUE"));
  const insertTickets = (n: number, title = "Printer on fire"): void =>
    applyScript(db, `INSERT INTO tickets (title, customer_id) SELECT '${title} ' || g, '${CUSTOMER}' FROM generate_series(1, ${n}) g;`);

  beforeAll(() => {
    db = freshDatabase("charter_test_row_counts");
    sql = schemaSql(helpdesk());
    applyScript(db, sql);
    applyScript(db, `INSERT INTO customers (id, name, email) VALUES ('${CUSTOMER}', 'Acme', 'a@acme.test');`);
  });

  it("counts only the tables whose contract asks, starting from the rows already there", () => {
    // A table counts rows or versions them (list totals kept by the app), never both.
    expect(sql).toContain(`SELECT "row_counts_install"('tickets', true), "row_versions_remove"('tickets');`);
    expect(sql).toContain(`SELECT "row_counts_remove"('customers'), "row_versions_install"('customers', false);`);
    expect(counted()).toBe(0);
    expect(counted("customers")).toBe(-1);
    expect(scalar(db, "SELECT count(*) FROM row_counts WHERE table_name = 'tickets'")).toBe("64");
  });

  it("follows inserts, deletes, soft deletes, restores and truncation", () => {
    insertTickets(300);
    expect(counted()).toBe(300);
    applyScript(db, "UPDATE tickets SET is_deleted = true WHERE title IN ('Printer on fire 1', 'Printer on fire 2', 'Printer on fire 3');");
    // Marking a deleted ticket again, an update that leaves the mark alone, a NULL mark (alive).
    applyScript(db, "UPDATE tickets SET is_deleted = true WHERE title = 'Printer on fire 1';");
    applyScript(db, "UPDATE tickets SET priority = 'high', is_deleted = NULL WHERE title = 'Printer on fire 4';");
    applyScript(db, "UPDATE tickets SET description = 'seen';");
    expect(counted()).toBe(297);
    applyScript(db, "UPDATE tickets SET is_deleted = false WHERE title = 'Printer on fire 2';");
    // A hard delete of an alive and of a soft-deleted ticket, and a delete of nothing.
    applyScript(db, "DELETE FROM tickets WHERE title IN ('Printer on fire 3', 'Printer on fire 5');");
    applyScript(db, "DELETE FROM tickets WHERE false;");
    expect(counted()).toBe(alive());
    expect(counted()).toBe(297);
    applyScript(db, "TRUNCATE tickets;");
    expect(counted()).toBe(0);
  });

  it("does not count what a rolled-back transaction wrote", () => {
    insertTickets(10);
    applyScript(db, `BEGIN; INSERT INTO tickets (title, customer_id) VALUES ('Gone again', '${CUSTOMER}'); ROLLBACK;`);
    expect(counted()).toBe(alive());
  });

  it("stays exact under concurrent writers on many connections", async () => {
    const before = alive();
    const writer = (w: number): Promise<void> => {
      const statements = Array.from(
        { length: 40 },
        (_, i) =>
          `INSERT INTO tickets (title, customer_id) VALUES ('Writer ${w} ticket ${i}', '${CUSTOMER}');\n` +
          (i % 4 === 3 ? `DELETE FROM tickets WHERE title = 'Writer ${w} ticket ${i - 1}';\n` : ""),
      ).join("");
      // psql sends a script's statements one by one: each commits on its own, as an app's writes do.
      const args = ["-h", PG_HOST, "-p", String(PG_PORT), "-U", PG_USER, "-d", db, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"];
      return new Promise((done, fail) => {
        const child = spawn("psql", args, { stdio: ["pipe", "ignore", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.on("error", fail);
        child.on("exit", (code) => (code === 0 ? done() : fail(new Error(`writer ${w}: ${stderr}`))));
        child.stdin.end(statements);
      });
    };
    await Promise.all(Array.from({ length: 12 }, (_, w) => writer(w)));
    expect(alive()).toBe(before + 12 * 30);
    expect(counted()).toBe(alive());
  });

  it("leaves counters alone when schema.sql runs again, and repairs missing ones", () => {
    const triggers = (): string[] =>
      query(db, "SELECT tgname FROM pg_trigger WHERE tgrelid = 'tickets'::regclass AND NOT tgisinternal ORDER BY tgname");
    expect(triggers()).toEqual(["row_counts_deleted", "row_counts_flipped", "row_counts_inserted", "row_counts_truncated"]);
    const shards = query(db, "SELECT shard || ':' || n FROM row_counts WHERE table_name = 'tickets' ORDER BY shard");
    applyScript(db, sql);
    expect(query(db, "SELECT shard || ':' || n FROM row_counts WHERE table_name = 'tickets' ORDER BY shard")).toEqual(shards);
    applyScript(db, "DELETE FROM row_counts WHERE table_name = 'tickets';");
    applyScript(db, sql);
    expect(counted()).toBe(alive());
    expect(triggers()).toHaveLength(4);
  });

  it("follows a renamed table, and forgets the counters of tables that are gone", () => {
    applyScript(db, "ALTER TABLE tickets RENAME TO cases;");
    applyScript(
      db,
      `SELECT row_counts_install('cases', true); DELETE FROM "row_counts" WHERE to_regclass(quote_ident("table_name")) IS NULL;`,
    );
    expect(counted("cases")).toBe(Number(scalar(db, "SELECT count(*) FROM cases WHERE is_deleted IS NOT TRUE")));
    expect(counted("tickets")).toBe(-1);
    applyScript(db, "ALTER TABLE cases RENAME TO tickets;");
    applyScript(db, sql);
    expect(counted()).toBe(alive());
    expect(counted("cases")).toBe(-1);
  });

  it("lets a migration drop the soft-delete column, then counts every row", () => {
    const drop = convertStatement({ type: "drop_column", table: "tickets", column: "is_deleted" });
    expect(drop).toMatch(/^DROP TRIGGER IF EXISTS "row_counts_flipped" ON "tickets";\n/);
    applyScript(
      db,
      `UPDATE tickets SET is_deleted = true WHERE title = 'Printer on fire 7'; ${drop} SELECT row_counts_install('tickets', false);`,
    );
    expect(counted()).toBe(Number(scalar(db, "SELECT count(*) FROM tickets")));
    insertTickets(2, "After the drop");
    expect(counted()).toBe(Number(scalar(db, "SELECT count(*) FROM tickets")));
  });

  it("removes triggers and counters when the contract goes back to count", () => {
    const triggers = () => query(db, "SELECT tgname FROM pg_trigger WHERE tgrelid = 'tickets'::regclass AND NOT tgisinternal ORDER BY 1");
    applyScript(db, schemaSql(withoutCounters(helpdesk())));
    // The version triggers take their place (soft delete included).
    expect(triggers()).toEqual(["row_versions_bumped", "row_versions_flipped"]);
    expect(counted()).toBe(-1);
    // And back (the soft-delete column too): the rows written meanwhile count when the triggers return.
    insertTickets(3, "Uncounted");
    applyScript(db, sql);
    expect(counted()).toBe(alive());
    expect(counted()).toBeGreaterThan(300);
    expect(triggers()).toEqual(["row_counts_deleted", "row_counts_flipped", "row_counts_inserted", "row_counts_truncated"]);
  });
});
