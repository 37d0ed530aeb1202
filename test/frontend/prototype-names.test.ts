import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { generateTarget } from "../../src/generators/registry.js";
import { writeFiles } from "../../src/generators/writer.js";
import { typecheckFolder } from "../support/random-pipeline.js";

const REPO = resolve(import.meta.dirname, "../..");

/**
 * Field names that are also members of Object.prototype (`constructor`, `prototype`: the ones a
 * snake_case field name can be) used to make the generated `*-fields.ts` fail tsc: a string index
 * type gave the `constructor` key Object's own member as its type. The real tsc and biome judge.
 */
describe("names of Object.prototype in the generated frontend", () => {
  const domain = mkdtempSync(join(tmpdir(), "charter-proto-names-"));
  cpSync(join(REPO, "examples/helpdesk"), domain, { recursive: true });
  const contract = join(domain, "entities/customer.contract.yaml");
  const extra = [
    "    constructor:\n      type: string\n      enum: [toString, __proto__, valueOf]\n",
    "    prototype:\n      type: integer\n",
    "    to_string:\n      type: boolean\n",
  ].join("");
  writeFileSync(contract, readFileSync(contract, "utf8").replace("  fields:\n", `  fields:\n${extra}`));
  const out = mkdtempSync(join(tmpdir(), "charter-proto-names-out-"));
  const { ir, findings } = checkDomain(domain);
  if (!ir) throw new Error(findings.map((f) => `${f.file}:${f.line}:${f.column} ${f.message}`).join("\n"));
  writeFiles(out, generateTarget(ir, "nextjs", out));

  it("keeps the fields in the entity's field specs", () => {
    const fields = readFileSync(join(out, "frontend/src/components/customer/customer-fields.ts"), "utf8");
    // The formatter decides the layout; the key and its spec are what count.
    expect(fields).toMatch(/\bconstructor: \{\s*name: "constructor"/);
    expect(fields).toContain("customerFields.prototype,");
  });

  it("passes biome check", () => {
    const r = spawnSync(join(REPO, "node_modules/.bin/biome"), ["check", "--max-diagnostics=50", "."], {
      cwd: join(out, "frontend"),
      encoding: "utf8",
    });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });

  it("passes tsc", { timeout: 15 * 60_000 }, () => {
    const appDir = typecheckFolder(out, "typecheck-prototype-names");
    const r = spawnSync(join(appDir, "node_modules/.bin/tsc"), ["--noEmit", "-p", "tsconfig.json"], { cwd: appDir, encoding: "utf8" });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });
});
