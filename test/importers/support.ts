import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { readModel } from "../../src/importers/factory/index.js";
import type { ImportNote } from "../../src/importers/model.js";
import { planImport, writeImport } from "../../src/importers/pipeline.js";
import { runCharter } from "../support/cli.js";

/** What an import wrote passes `charter forge validate` with no error. */
export function validates(dir: string): void {
  const r = runCharter(["forge", "validate", dir]);
  expect(r.stdout).toMatch(/0 errors/);
  expect(r.status).toBe(0);
}

const work = mkdtempSync(join(tmpdir(), "charter-importers-"));
let n = 0;

/** A path of its own (`prefix-N`) under this run's scratch folder, not created yet. */
export function scratch(prefix: string): string {
  return join(work, `${prefix}-${n++}`);
}

/** `charter extract INPUT --format json` into a scratch folder of its own: the folder and the notes. */
export function extractJson(input: string, domain = "x"): { domainDir: string; notes: ImportNote[] } {
  const domainDir = scratch("out");
  const r = runCharter(["extract", input, "--domain", domain, "--output", domainDir, "--yes", "--no-llm", "--format", "json"]);
  expect(r.status, r.stderr).toBe(0);
  return { domainDir, notes: (JSON.parse(r.stdout) as { notes: ImportNote[] }).notes };
}

/** Writes an input tree (relative path -> text) into a folder of its own and returns the folder. */
export function files(tree: Record<string, string>): string {
  const dir = scratch("in");
  for (const [rel, text] of Object.entries(tree)) {
    const p = join(dir, rel);
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, text);
  }
  return dir;
}

/**
 * Imports a SQL input of the committed corpus (test/fixtures/import-corpus/<name>/<rel>) into a
 * folder of its own under `work`, as `charter factory migrate` would, for the catalog judges.
 */
export async function importSqlCorpusInput(work: string, name: string, rel: string) {
  const inputPath = join("test/fixtures/import-corpus", name, rel);
  const domainDir = join(work, name);
  const model = await readModel(inputPath, "sql");
  const options = { domain: name.replace(/[^a-z0-9]+/g, "_"), directory: domainDir, routes: "all" as const, pages: false, workflows: true };
  const plan = await planImport(model, { ...options, llm: false });
  const summary = writeImport(model, plan, { ...options, force: true, dryRun: false });
  expect(summary.refused).toBeNull();
  return { inputPath, domainDir, summary };
}
