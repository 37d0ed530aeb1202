import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { compareText } from "../../shared/text.js";
import type { ImportModel, ImportNote, ImportOperation } from "../model.js";
import { ImportError } from "../model.js";
import { entityName, snakeCase } from "../naming.js";
import { interpretPython, readPythonFiles } from "./python.js";

const IGNORED = new Set(["node_modules", ".git", ".venv", "venv", "__pycache__", "dist", "build", ".tox", "migrations"]);

export interface Discovery {
  python: string[];
  typescript: string[];
  prisma: string[];
}

/** Pass 1, discover: the source files worth reading, in a stable order. */
export function discover(root: string): Discovery {
  const out: Discovery = { python: [], typescript: [], prisma: [] };
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(root);
  } catch {
    throw new ImportError("cannot read: no such file or directory", { file: root });
  }
  const visit = (p: string): void => {
    if (p.endsWith(".py")) out.python.push(p);
    else if (p.endsWith(".ts") && !p.endsWith(".d.ts")) out.typescript.push(p);
    else if (p.endsWith(".prisma")) out.prisma.push(p);
  };
  if (st.isFile()) visit(root);
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name))) {
      if (e.name.startsWith(".") || IGNORED.has(e.name)) continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) visit(full);
    }
  };
  if (st.isDirectory()) walk(root);
  return out;
}

export interface ExtractResult {
  model: ImportModel;
  frameworks: string[];
}

/**
 * Passes 2 to 4 on what discovery found: entities (fields, types, constraints), relations (foreign
 * keys, later turned into references and workflows by the shared conversion) and routes, each
 * operation tied to the entity its path names.
 */
export async function extractModel(found: Discovery, progress: (line: string) => void = () => undefined): Promise<ExtractResult> {
  const py = interpretPython(readPythonFiles(found.python));
  // The TypeScript compiler and the Prisma parser load only when there are such files.
  const tsx =
    found.typescript.length > 0
      ? (await import("./typescript.js")).readTypeScriptFiles(found.typescript)
      : { frameworks: new Set<string>(), tables: [], operations: [], notes: [] };
  const readPrisma = found.prisma.length > 0 ? (await import("../factory/prisma.js")).readPrismaSchema : undefined;
  // A broken .prisma file is one file of the code base: its located error becomes a note, the rest is read.
  const prismaErrors: ImportNote[] = [];
  const prisma = readPrisma
    ? found.prisma.flatMap((f) => {
        try {
          return [readPrisma(f)];
        } catch (e) {
          if (!(e instanceof ImportError)) throw e;
          prismaErrors.push({ kind: "skipped", subject: f, reason: e.message, location: e.location ?? { file: f } });
          return [];
        }
      })
    : [];
  const tables = [...py.tables, ...tsx.tables, ...prisma.flatMap((m) => m.tables)];
  progress(`entities: ${tables.length} model classes`);
  const names = tables.map((t) => ({
    table: t.name,
    keys: new Set([entityName(t.name), snakeCase(t.tableName ?? t.name), snakeCase(t.name)]),
  }));
  const operations: ImportOperation[] = [...py.operations, ...tsx.operations].map((op) => {
    const segment = op.path.split("/").filter((s) => s && !s.startsWith("{"))[0];
    const hit = segment ? names.find((n) => n.keys.has(snakeCase(segment)) || n.keys.has(entityName(segment))) : undefined;
    return hit ? { ...op, table: hit.table } : op;
  });
  progress(`relations: ${tables.reduce((n, t) => n + t.foreignKeys.length, 0)} foreign keys`);
  progress(`routes: ${operations.length} operations`);
  const files = [...found.python, ...found.typescript, ...found.prisma];
  const frameworks = new Set([...py.frameworks, ...tsx.frameworks, ...(prisma.length > 0 ? ["Prisma"] : [])]);
  const notes = [...py.notes, ...tsx.notes, ...prismaErrors, ...prisma.flatMap((m) => m.notes)];
  return { model: { format: "code", files, tables, operations, notes }, frameworks: [...frameworks].sort() };
}
