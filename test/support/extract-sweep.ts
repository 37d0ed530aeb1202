import { readdirSync } from "node:fs";
import { join } from "node:path";
import { convertModel } from "../../src/importers/convert.js";
import { type Discovery, extractModel } from "../../src/importers/extract/index.js";
import { interpretPython, readPythonFiles } from "../../src/importers/extract/python.js";
import { readTypeScriptFiles } from "../../src/importers/extract/typescript.js";
import { ImportError, type ImportModel } from "../../src/importers/model.js";

/**
 * Never a crash (issue 38): `charter extract`'s reading and conversion over every `.py` and `.ts`
 * file of a tree — tests, migrations, scripts included, which the extractor's own discovery skips
 * in part — once as one code base and once file by file. Each run must end in contracts, notes or
 * an ImportError with a place; anything else is a crash, listed with the file.
 */

export interface SweepResult {
  files: number;
  tables: number;
  notes: number;
  crashes: { file: string; error: string }[];
}

/** Every .py and .ts (not .d.ts) file under root, in a stable order; node_modules and .git aside. */
export function allSourceFiles(root: string): Discovery {
  const out: Discovery = { python: [], typescript: [], prisma: [] };
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (e.name === "node_modules" || e.name === ".git") continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith(".py")) out.python.push(full);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.typescript.push(full);
    }
  };
  walk(root);
  return out;
}

const CONVERT = { domain: "sweep", routes: "operations", pages: false, workflows: true } as const;

export async function sweepExtract(root: string): Promise<SweepResult> {
  const found = allSourceFiles(root);
  const result: SweepResult = { files: found.python.length + found.typescript.length, tables: 0, notes: 0, crashes: [] };
  const attempt = async (file: string, run: () => ImportModel | Promise<ImportModel>): Promise<void> => {
    try {
      const model = await run();
      const converted = convertModel(model, CONVERT);
      result.tables += model.tables.length;
      result.notes += converted.notes.length;
    } catch (e) {
      if (e instanceof ImportError && e.location !== undefined) return;
      result.crashes.push({ file, error: e instanceof Error ? (e.stack ?? e.message).split("\n").slice(0, 3).join(" | ") : String(e) });
    }
  };
  // The whole tree as one code base.
  await attempt(root, async () => (await extractModel(found)).model);
  // Each file alone: a file that breaks a rule is found by name.
  const parsed = found.python.length > 0 ? readPythonFiles(found.python) : [];
  for (const f of parsed)
    await attempt(f.path, () => {
      const py = interpretPython([f]);
      return { format: "code", files: [f.path], tables: py.tables, operations: py.operations, notes: py.notes };
    });
  for (const file of found.typescript)
    await attempt(file, () => {
      const t = readTypeScriptFiles([file]);
      return { format: "code", files: [file], tables: t.tables, operations: t.operations, notes: t.notes };
    });
  return result;
}
