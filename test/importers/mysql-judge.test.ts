import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { judge } from "../support/import-judges/mysql.js";
import { importSqlCorpusInput } from "./support.js";

/**
 * The MySQL judge: the input applied to a real MariaDB, its information_schema against the
 * catalog of the generated schema on PostgreSQL (test/support/import-judges/mysql.ts).
 */
const INPUTS: [string, string][] = [
  ["chinook-mysql", "input/Chinook_MySql.sql"],
  ["sakila-mysql", "input/mysql-sakila-schema.sql"],
  // Prisma migrations for MySQL: keys dropped and re-added with another delete rule.
  ["financer-migrations", "input"],
];

const work = mkdtempSync(join(tmpdir(), "charter-mysql-judge-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const importInput = (name: string, rel: string) => importSqlCorpusInput(work, name, rel);

describe("the MySQL judge: MariaDB's catalog of the input against the generated PostgreSQL schema", () => {
  it.each(INPUTS)(
    "%s: every difference is named by a note (0 silent)",
    async (name, rel) => {
      const { inputPath, domainDir, summary } = await importInput(name, rel);
      const r = await judge({ inputPath, domainDir, notes: summary.notes });
      expect(r.refused).toBe(0);
      expect(r.compared).toBeGreaterThan(50);
      expect(r.silent).toEqual([]);
    },
    120_000,
  );

  it("finds the differences when the import's notes are withheld", async () => {
    const { inputPath, domainDir } = await importInput("financer-migrations", "input");
    const r = await judge({ inputPath, domainDir, notes: [] });
    const kinds = new Set(r.silent.map((s) => s.fact));
    expect(kinds).toContain("primary_key");
    // VARCHAR(191) keys read from MariaDB's catalog; their references are uuids in the generated schema.
    expect(r.silent.find((s) => s.subject === "Tag.householdId" && s.fact === "type")?.detail).toBe("varchar became uuid");
    // The last migration's rule, read by MariaDB: the judge sees the cascade the import carried.
    expect(r.silent.some((s) => s.fact === "on_delete")).toBe(false);
  }, 120_000);
});
