import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { convertModel } from "../../src/importers/convert.js";
import { readModel } from "../../src/importers/factory/index.js";
import { judge } from "../support/import-judges/sql.js";
import { importSqlCorpusInput } from "./support.js";

// The PostgreSQL inputs of the committed corpus that import in seconds; the bench runs them all.
const INPUTS: [string, string][] = [
  ["chinook-postgres", "input/Chinook_PostgreSql.sql"],
  ["northwind-postgres", "input"],
  ["sakila-postgres", "input"],
  // Prisma migrations: enum defaults, timestamps the mixin stands for, status columns that become workflows.
  ["documenso-migrations", "input"],
];

const work = mkdtempSync(join(tmpdir(), "charter-sql-judge-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const importInput = (name: string, rel: string) => importSqlCorpusInput(work, name, rel);

describe("the SQL judge: two real PostgreSQL catalogs, input against generated schema", () => {
  it.each(INPUTS)(
    "%s: every difference is named by a note (0 silent)",
    async (name, rel) => {
      const { inputPath, domainDir, summary } = await importInput(name, rel);
      const r = await judge({ inputPath, domainDir, notes: summary.notes });
      expect(r.compared).toBeGreaterThan(50);
      expect(r.silent).toEqual([]);
      // The import's own report agrees: nothing it read was lost without a note.
      expect(summary.fidelity.facts.filter((f) => f.status === "silent")).toEqual([]);
    },
    120_000,
  );

  it("finds the differences when the import's notes are withheld", async () => {
    const { inputPath, domainDir } = await importInput("chinook-postgres", "input/Chinook_PostgreSql.sql");
    const r = await judge({ inputPath, domainDir, notes: [] });
    const kinds = new Set(r.silent.map((s) => s.fact));
    // Integer keys become UUIDs, integer foreign keys uuid references: both are differences.
    expect(kinds).toContain("primary_key");
    expect(kinds).toContain("type");
    expect(r.silent.find((s) => s.subject === "album.artist_id" && s.fact === "type")?.detail).toBe("int4 became uuid");
  }, 120_000);
});

describe("SQL classes of issue 38", () => {
  it("reads a MySQL dump (USE db; UNIQUE KEY) as MySQL without --dialect", async () => {
    const file = join(work, "dump.sql");
    writeFileSync(
      file,
      "USE shop;\nCREATE TABLE customer (\n  id int NOT NULL,\n  email varchar(120) NOT NULL,\n  PRIMARY KEY (id),\n  UNIQUE KEY customer_email (email)\n);\n",
    );
    const model = await readModel(file, "sql");
    const email = model.tables[0]?.fields.find((f) => f.name === "email");
    expect(email).toMatchObject({ type: "string", required: true, unique: true, constraints: { maxLength: 120 } });
  });

  it("carries jsonb NOT NULL DEFAULT '{}' as a default, so the field is not required", async () => {
    const file = join(work, "json.sql");
    writeFileSync(
      file,
      "CREATE TABLE profile (\n  id uuid PRIMARY KEY,\n  settings jsonb NOT NULL DEFAULT '{}',\n  flags jsonb DEFAULT '[]'::jsonb\n);\n",
    );
    const model = await readModel(file, "sql");
    const fields = model.tables[0]?.fields ?? [];
    expect(fields.find((f) => f.name === "settings")?.default).toEqual({});
    expect(fields.find((f) => f.name === "flags")?.default).toEqual([]);
    const c = convertModel(model, { domain: "x", routes: "none", pages: false, workflows: false });
    const spec = c.contracts.find((x) => x.name === "profile")?.data.spec as { fields: Record<string, Record<string, unknown>> };
    expect(spec.fields.settings).toEqual({ type: "object", default: {} });
  });
});
