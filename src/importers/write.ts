import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { safeJoin, writeFiles } from "../generators/writer.js";
import type { PlannedContract } from "./convert.js";
import { ImportError } from "./model.js";
import { printContract } from "./print.js";

/** Contract files of the plan that already exist in the domain directory. */
export function existingFiles(contracts: readonly PlannedContract[], domainDir: string): string[] {
  const root = resolve(domainDir);
  return contracts.map((c) => c.file).filter((f) => existsSync(safeJoin(root, f)));
}

/**
 * Refuses, before anything is written, when a contract would replace an existing file and
 * `--force` was not given: an import never half-overwrites a domain.
 */
export function refuseOverwrite(contracts: readonly PlannedContract[], domainDir: string, force: boolean): void {
  if (force) return;
  const clash = existingFiles(contracts, domainDir);
  if (clash.length === 0) return;
  const shown = clash.slice(0, 5).map((f) => join(domainDir, f));
  throw new ImportError(
    `${clash.length} contract file(s) already exist (${shown.join(", ")}${clash.length > 5 ? ", ..." : ""}); nothing was written. Use --force to replace them`,
  );
}

/** Writes contracts through the one writer (atomic, path-safe, unchanged files left alone). */
export function writeContracts(contracts: readonly PlannedContract[], domainDir: string): string[] {
  const result = writeFiles(
    domainDir,
    contracts.map((c) => ({ path: c.file, content: printContract(c) })),
  );
  return [...result.written, ...result.unchanged].sort();
}
