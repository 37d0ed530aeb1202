import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { ImportNote } from "../../src/importers/model.js";
import { runCharter } from "../support/cli.js";
import { judge, judgeOpenApi } from "../support/import-judges/openapi.js";

/**
 * The independent OpenAPI judge (test/support/import-judges/openapi.ts) on the hand-written inputs
 * of each issue-38 class: the generated app's own /openapi.json against the input, every
 * difference named by a note. And the judge catches what a note does not cover.
 */
const DIR = resolve("test/fixtures/importers/openapi/classes");
const work = mkdtempSync(join(tmpdir(), "charter-openapi-judge-"));

function importSpec(spec: string, name: string): { domainDir: string; notes: ImportNote[] } {
  const domainDir = join(work, name);
  const r = runCharter([
    "factory",
    "migrate",
    spec,
    "--domain",
    "judged",
    "--output",
    domainDir,
    "--routes",
    "--no-llm",
    "--format",
    "json",
  ]);
  expect(r.status, r.stdout + r.stderr).toBe(0);
  return { domainDir, notes: (JSON.parse(r.stdout) as { notes: ImportNote[] }).notes };
}

describe("the OpenAPI judge", () => {
  it.each([
    ["shapes.yaml", "shapes"],
    ["multi/api.yaml", "multi"],
    ["extras-swagger2.yaml", "extras2"],
    ["extras-31.yaml", "extras31"],
    ["nested-me.yaml", "nestedme"],
  ])(
    "finds no silent difference between %s and the app generated from its import",
    async (file, name) => {
      const { domainDir, notes } = importSpec(join(DIR, file), name);
      const j = await judgeOpenApi(join(DIR, file), domainDir, notes);
      expect(j.silent).toEqual([]);
      expect(j.carried).toBeGreaterThan(10);
      expect(j.changed + j.leftOut).toBeGreaterThan(0);
    },
    180_000,
  );

  it("names a fact the contracts lost without a note: a changed length and an operation moved elsewhere", async () => {
    const { domainDir, notes } = importSpec(join(DIR, "shapes.yaml"), "tampered");
    const entity = join(domainDir, "entities/domain.contract.yaml");
    writeFileSync(entity, readFileSync(entity, "utf8").replace("maxLength: 253", "maxLength: 250"));
    const route = join(domainDir, "routes/domain_api.contract.yaml");
    writeFileSync(
      route,
      readFileSync(route, "utf8").replace("entity: entity/judged/domain\n", "entity: entity/judged/domain\n  base_path: /zones\n"),
    );
    const j = await judge({ inputPath: join(DIR, "shapes.yaml"), domainDir, notes });
    expect(j.silent).toEqual(
      expect.arrayContaining([
        { subject: "Domain.name", fact: "length", detail: "maxLength 253 in the input, 250 in the app" },
        { subject: "POST /domains", fact: "operation", detail: "the app does not serve POST /domains" },
      ]),
    );
    expect(j.compared).toBeGreaterThan(j.silent.length);
  }, 180_000);
});
