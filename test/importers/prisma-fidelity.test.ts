import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { ImportNote } from "../../src/importers/model.js";
import { runCharter } from "../support/cli.js";
import { validates } from "./support.js";

const work = mkdtempSync(join(tmpdir(), "charter-prisma-fidelity-"));

describe("charter factory migrate (Prisma): every fact carried or named (issue 38)", () => {
  it("carries @db.VarChar lengths, @db.Uuid, @db.Text, @db.Date, JSON and list defaults; names what it changes", () => {
    const dir = join(work, "native");
    const input = resolve("test/fixtures/importers/prisma/native-types.prisma");
    const r = runCharter(["factory", "migrate", input, "--domain", "crm", "--output", dir, "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    validates(dir);
    const spec = (parse(readFileSync(join(dir, "entities/account.contract.yaml"), "utf8")) as { spec: Record<string, unknown> }).spec;
    const fields = spec.fields as Record<string, Record<string, unknown>>;
    expect(fields.handle).toEqual({ type: "string", required: true, constraints: { maxLength: 32 } });
    expect(fields.country).toEqual({ type: "string", required: true, constraints: { maxLength: 2 } });
    expect(fields.bio).toEqual({ type: "text" });
    // `Json @default("{}")`: the default is the JSON value, so the field is not required.
    expect(fields.settings).toEqual({ type: "object", default: {} });
    expect(fields.rank).toEqual({ type: "integer", default: 0, constraints: { min: -32768, max: 32767 } });
    expect(fields.birthday).toEqual({ type: "date" });
    expect(fields.plans).toEqual({ type: "array", items_type: "string", default: ["FREE"] });
    expect(fields).not.toHaveProperty("legacy");
    // The mapped key keeps its column name and is the key, not a stray field.
    expect(fields.account_id).toMatchObject({ type: "uuid" });
    const summary = JSON.parse(r.stdout) as { notes: ImportNote[] };
    const about = (subject: string, fact: string): string[] =>
      summary.notes.filter((n) => n.subject === subject && n.fact === fact).map((n) => n.reason);
    expect(about("Account.country", "type")).toEqual([
      "@db.Char(2) is a fixed-length, blank-padded column; the contract keeps its maximum length only",
    ]);
    expect(about("Account.balance", "type")).toEqual(["@db.Decimal(12, 2) becomes a number: the contract keeps no precision or scale"]);
    expect(about("Account.opensAt", "type")[0]).toMatch(/@db\.Time\(0\) \(a time of day\) becomes a string/);
    expect(about("Account.token", "default")[0]).toMatch(/dbgenerated\("gen_random_uuid\(\)"\)\) is the database's expression; left out/);
    expect(about("Account.legacy", "column")[0]).toMatch(/^@ignore/);
    expect(about("AccountSummary", "table")[0]).toMatch(/a Prisma view/);
    // `Json @default("[]")`: an array does not fit an object field; said, not silent, and the field
    // stays optional as Prisma's default made it.
    expect(fields.flags).toEqual({ type: "object" });
    expect(about("Account.flags", "default")[0]).toMatch(/^default "\[\]" is not a JSON object/);
    // @@unique([email]) is the field's uniqueness, named like @unique.
    expect(summary.notes.some((n) => n.subject === "account.email" && /unique constraint/.test(n.reason))).toBe(true);
    expect(summary.notes.some((n) => /account_id/.test(n.subject) && /primary key/.test(n.reason))).toBe(true);
  });
});
