import { describe, expect, it } from "vitest";
import { convertModel } from "../../src/importers/convert.js";
import { fidelityLines, fidelityReport } from "../../src/importers/fidelity.js";
import type { ImportModel } from "../../src/importers/model.js";

const at = { file: "schema.sql", line: 1 };

function model(): ImportModel {
  return {
    format: "sql",
    files: ["schema.sql"],
    operations: [],
    notes: [],
    tables: [
      {
        name: "author",
        location: at,
        primaryKey: ["id"],
        foreignKeys: [],
        fields: [
          { name: "id", type: "uuid", required: true },
          { name: "name", type: "string", required: true, constraints: { maxLength: 80 }, unique: true },
          { name: "settings", type: "object", required: true, default: {} },
        ],
      },
      {
        name: "book",
        location: at,
        primaryKey: ["id"],
        foreignKeys: [{ columns: ["author_id"], table: "author", targetColumns: ["id"], onDelete: "cascade" }],
        fields: [
          { name: "id", type: "uuid", required: true },
          { name: "title", type: "string", required: true },
          { name: "author_id", type: "uuid", required: true },
          { name: "pages", type: "integer", constraints: { min: 1 } },
        ],
      },
    ],
  };
}

const options = { domain: "lib", routes: "none" as const, pages: false, workflows: false };

describe("fidelity report", () => {
  it("lists every fact carried, and the changes and omissions with the notes' reasons", () => {
    const m = model();
    const c = convertModel(m, options);
    const r = fidelityReport(m, c.contracts, c.notes, c.trace);
    expect(r.silent).toBe(0);
    const of = (subject: string, fact: string) => r.facts.find((f) => f.subject === subject && f.fact === fact);
    expect(of("author", "table")?.status).toBe("carried");
    expect(of("author.name", "length")?.status).toBe("carried");
    expect(of("author.name", "unique")).toMatchObject({ status: "left_out", reason: expect.stringContaining("unique") });
    expect(of("author.settings", "default")?.status).toBe("carried");
    expect(of("author.settings", "nullability")).toMatchObject({ status: "changed", reason: expect.stringContaining("NOT NULL") });
    expect(of("book.author_id", "reference")?.status).toBe("carried");
    expect(of("book.author_id", "on_delete")?.status).toBe("carried");
    expect(of("book.pages", "bounds")?.status).toBe("carried");
    expect(r.carried + r.changed + r.left_out).toBe(r.facts.length);
    expect(fidelityLines(r)[0]).toBe(`Fidelity: ${r.carried} carried, ${r.changed} changed, ${r.left_out} left out, 0 silent`);
  });

  it("names a difference between the model and the contracts that no note covers as silent", () => {
    const m = model();
    const c = convertModel(m, options);
    const fieldsOf = (name: string): Record<string, Record<string, unknown>> => {
      const e = c.contracts.find((x) => x.name === name);
      if (!e) throw new Error(`no entity ${name}`);
      return (e.data.spec as { fields: Record<string, Record<string, unknown>> }).fields;
    };
    // A conversion that loses a bound, a delete rule and a column without a word.
    delete fieldsOf("book").pages?.constraints;
    delete (fieldsOf("book").author_id?.references as Record<string, unknown> | undefined)?.on_delete;
    delete fieldsOf("author").settings;
    const r = fidelityReport(m, c.contracts, c.notes, c.trace);
    const silent = r.facts.filter((f) => f.status === "silent").map((f) => `${f.fact} ${f.subject}`);
    expect(silent.sort()).toEqual(["bounds book.pages", "column author.settings", "on_delete book.author_id"]);
    expect(fidelityLines(r).some((l) => l.startsWith('  SILENT on_delete book.author_id: input "cascade", contract "restrict"'))).toBe(
      true,
    );
  });

  it("names a key that is also a reference (Supabase's id uuid references auth.users) as left out", () => {
    const m = model();
    m.tables.push({
      name: "profile",
      location: at,
      primaryKey: ["id"],
      foreignKeys: [{ columns: ["id"], table: "author", targetColumns: ["id"], onDelete: "cascade" }],
      fields: [
        { name: "id", type: "uuid", required: true },
        { name: "full_name", type: "text" },
      ],
    });
    const c = convertModel(m, options);
    const r = fidelityReport(m, c.contracts, c.notes, c.trace);
    expect(r.silent).toBe(0);
    expect(r.facts.find((f) => f.subject === "profile.id" && f.fact === "reference")).toMatchObject({
      status: "left_out",
      reason: expect.stringContaining("implicit id"),
    });
  });
});
