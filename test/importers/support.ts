import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
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
