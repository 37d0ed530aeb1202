import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { ImportNote } from "../../src/importers/model.js";
import { runCharter } from "../support/cli.js";
import { judge as judgePrisma } from "../support/import-judges/prisma.js";

/**
 * The independent judges of Prisma and code-base imports (test/support/import-judges/): they find
 * a difference the import did not name, and find none where every change is named.
 */

const work = mkdtempSync(join(tmpdir(), "charter-code-judges-"));
let n = 0;

function migrate(input: string): { domainDir: string; notes: ImportNote[] } {
  const domainDir = join(work, `out-${n++}`);
  const r = runCharter(["factory", "migrate", input, "--domain", "x", "--output", domainDir, "--format", "json"]);
  expect(r.status, r.stderr).toBe(0);
  return { domainDir, notes: (JSON.parse(r.stdout) as { notes: ImportNote[] }).notes };
}

describe("Prisma judge (Prisma's own schema engine, get_dmmf)", () => {
  const input = resolve("test/fixtures/importers/prisma/native-types.prisma");

  it("finds no silent difference when every change is named", async () => {
    const { domainDir, notes } = migrate(input);
    const r = await judgePrisma({ inputPath: input, domainDir, notes });
    expect(r.compared).toBeGreaterThan(40);
    expect(r.silent).toEqual([]);
  });

  it("calls silent each change no note names, and each fact the contracts lost", async () => {
    const { domainDir, notes } = migrate(input);
    const unnamed = await judgePrisma({ inputPath: input, domainDir, notes: [] });
    const found = unnamed.silent.map((s) => `${s.subject} ${s.fact}`);
    expect(found).toEqual(
      expect.arrayContaining([
        "Account.country type",
        "Account.balance type",
        "Account.opensAt type",
        "Account.token default",
        "Account.email unique",
        "Account.id primary_key",
        "Enrollment.blocks type",
        "Payout.enrollment reference",
      ]),
    );
    // A length the contract got wrong is silent even with the import's notes.
    const file = join(domainDir, "entities/account.contract.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("maxLength: 32", "maxLength: 33"));
    const edited = await judgePrisma({ inputPath: input, domainDir, notes });
    expect(edited.silent).toEqual([{ subject: "Account.handle", fact: "length", detail: "length 32 became 33" }]);
  });

  it.each([
    ["documenso-prisma", "documenso-prisma/input/schema.prisma"],
    ["financer-prisma-folder (multi-file)", "financer-prisma-folder/input"],
  ])("finds no silent difference in the corpus input %s", async (_name, rel) => {
    const path = resolve("test/fixtures/import-corpus", rel);
    const { domainDir, notes } = migrate(path);
    const r = await judgePrisma({ inputPath: path, domainDir, notes });
    expect(r.compared).toBeGreaterThan(300);
    expect(r.silent).toEqual([]);
  });
});
