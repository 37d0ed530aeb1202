import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { fingerprintOf, SqliteTicketStore } from "../../src/healer/index.js";
import { missingColumnsSql, ticketColumns, ticketTableSql, toTicket } from "../../src/healer/store/ticket-table.js";

/** A ticket file as Charter's store version 1 wrote it: no `claims` column. */
const VERSION_1 = `
CREATE TABLE tickets (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, contract_fqn TEXT,
  error_type TEXT NOT NULL DEFAULT '', raw_error TEXT NOT NULL, context TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'queued', tier INTEGER NOT NULL DEFAULT 0, priority TEXT NOT NULL DEFAULT 'medium',
  priority_order INTEGER NOT NULL DEFAULT 2, fixable_by TEXT NOT NULL DEFAULT 'contract', proposal TEXT,
  created_at TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_at TEXT NOT NULL, resolved_at TEXT,
  resolution_note TEXT NOT NULL DEFAULT '', fingerprint TEXT NOT NULL, occurrences INTEGER NOT NULL DEFAULT 1,
  last_seen_at TEXT NOT NULL, claimed_by TEXT, diff_id TEXT
);
PRAGMA user_version = 1;
`;

describe("one ticket table for both stores", () => {
  it("gives both dialects the same columns, PostgreSQL's claim lease aside", () => {
    const names = (d: "sqlite" | "postgres") => ticketColumns(d).map((c) => c.name);
    const lease = ["lease_token", "lease_until"];
    expect(names("postgres").filter((n) => !lease.includes(n))).toEqual(names("sqlite"));
    expect(names("postgres")).toEqual(expect.arrayContaining(lease));
    expect(names("sqlite")).toEqual(expect.arrayContaining(["request_id", "trace_id"]));
    expect(ticketTableSql("sqlite", "tickets")).toContain("seq             INTEGER PRIMARY KEY AUTOINCREMENT,");
    expect(ticketTableSql("postgres", "healer.tickets")).toContain("created_ms      BIGINT NOT NULL,");
    expect(ticketTableSql("postgres", "healer.tickets")).toContain(
      "status          TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'analyzing', 'proposed', 'approved', 'applied', 'failed', 'rejected'))",
    );
  });

  it("maps a row to a ticket: only ticket fields, JSON parsed", () => {
    const row = { seq: 3, created_ms: 5, claimed_by: "h:1", claims: 2, context: '{"a":1}', proposal: null, id: "x", status: "queued" };
    expect(toTicket(row)).toEqual({ id: "x", status: "queued", context: { a: 1 }, proposal: null });
  });

  it("adds the columns an older SQLite file lacks, and the store works on it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "charter-tickets-")), "healer.db");
    const old = new Database(path);
    old.exec(VERSION_1);
    old.close();
    expect(missingColumnsSql("sqlite", "tickets", new Set(["seq", "id"]))).toContain(
      "ALTER TABLE tickets ADD COLUMN claims INTEGER NOT NULL DEFAULT 0",
    );
    const store = new SqliteTicketStore(path);
    try {
      const columns = (store.db.pragma("table_info(tickets)") as { name: string }[]).map((c) => c.name);
      expect(columns).toEqual(ticketColumns("sqlite").map((c) => c.name));
      const { ticket } = await store.ingest({
        source: "manual",
        contract_fqn: "entity/shop/order",
        error_type: "runtime_exception",
        raw_error: "boom",
        context: { path: "/orders" },
        tier: 3,
        priority: "high",
        fixable_by: "contract",
        fingerprint: fingerprintOf("entity/shop/order", "runtime_exception", "boom"),
      });
      expect(ticket).toMatchObject({ status: "queued", priority: "high", priority_order: 1, context: { path: "/orders" }, proposal: null });
      expect((await store.claimNext())?.id).toBe(ticket.id);
      expect(store.db.prepare("SELECT claims FROM tickets WHERE id = ?").get(ticket.id)).toEqual({ claims: 1 });
    } finally {
      await store.close();
    }
  });
});
