import { diffLines } from "diff";
import pg from "pg";
import type { DomainIR } from "../compiler/ir.js";
import { type GeneratedFile, generateTarget, readExisting, resolveTargets, writeFiles } from "../generators/index.js";
import { type ApiPlan, planApi } from "./api.js";

/** One file `generate` would write, with how many lines it adds and removes. */
export interface PlannedFile {
  path: string;
  added: number;
  removed: number;
}

/** A migration step that loses data, with the rows it would touch when a database was asked. */
export interface DestructiveStep {
  statement: string;
  table: string;
  column?: string;
  rows?: number;
}

export interface Plan {
  target: string;
  output: string;
  added: PlannedFile[];
  changed: PlannedFile[];
  removed: string[];
  /** Files generate would leave alone: edited by hand, or not charter's. */
  kept: { path: string; reason: string; stale: boolean }[];
  migration: { file: string; destructive: DestructiveStep[] } | null;
  /** The API's changes; null when the target has no FastAPI backend or they could not be computed. */
  api: ApiPlan | null;
  /** Why the API could not be compared (no Python with the backend's packages, say). */
  apiError?: string;
}

/**
 * What `charter forge generate` would do, computed the way it does it (the same generators and the
 * writer's dry run, which tells hand-edited files apart by the manifest's hashes), with nothing written.
 */
export function planGeneration(ir: DomainIR, target: string, output: string): { plan: Plan; files: GeneratedFile[] } {
  const targets = resolveTargets(target).map((g) => g.target);
  const files = generateTarget(ir, target, output);
  const outcome = writeFiles(output, files, { dryRun: true, targets });
  const byPath = new Map(files.map((f) => [f.path, f]));
  const before = readExisting(output, outcome.written);
  const added: PlannedFile[] = [];
  const changed: PlannedFile[] = [];
  for (const path of outcome.written) {
    const next = contentOf(byPath.get(path));
    const old = before.get(path);
    if (old === undefined) {
      added.push({ path, added: lineCount(next), removed: 0 });
      continue;
    }
    let plus = 0;
    let minus = 0;
    for (const part of diffLines(old, next)) {
      if (part.added) plus += part.count ?? 0;
      else if (part.removed) minus += part.count ?? 0;
    }
    changed.push({ path, added: plus, removed: minus });
  }
  const migrationPath = added.map((f) => f.path).find((p) => /(^|\/)migrations\/\d+_[^/]*\.sql$/.test(p));
  const migration = migrationPath ? describeMigration(migrationPath, contentOf(byPath.get(migrationPath))) : null;
  return {
    plan: {
      target,
      output,
      added,
      changed,
      removed: outcome.removed,
      kept: outcome.kept.map((k) => ({ path: k.path, reason: k.reason, stale: k.stale })),
      migration,
      ...apiOf(output, files),
    },
    files,
  };
}

/** The API part of a plan: a failure to build an OpenAPI document is reported, not fatal. */
function apiOf(output: string, files: readonly GeneratedFile[]): { api: ApiPlan | null; apiError?: string } {
  try {
    return { api: planApi(output, files) };
  } catch (e) {
    return { api: null, apiError: e instanceof Error ? e.message : String(e) };
  }
}

function contentOf(f: GeneratedFile | undefined): string {
  return f?.content ?? "";
}

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

const DROP_TABLE = /^\s*DROP TABLE (?:IF EXISTS )?"?([A-Za-z0-9_]+)"?/i;
const DROP_COLUMN = /^\s*ALTER TABLE (?:ONLY )?"?([A-Za-z0-9_]+)"?\s+DROP COLUMN (?:IF EXISTS )?"?([A-Za-z0-9_]+)"?/i;
const ALTER_TYPE = /^\s*ALTER TABLE (?:ONLY )?"?([A-Za-z0-9_]+)"?\s+ALTER COLUMN "?([A-Za-z0-9_]+)"?\s+(?:SET DATA )?TYPE/i;

/** The statements of a migration that lose data: dropped tables and columns, changed column types. */
export function describeMigration(file: string, sql: string): Plan["migration"] {
  // Split at semicolons: a function body's inner statements come out as fragments that start with
  // no DROP or ALTER TABLE, so they never read as a step.
  const statements = sql
    .split(";")
    .map((s) =>
      s
        .split("\n")
        .filter((l) => !l.trim().startsWith("--"))
        .join("\n")
        .trim(),
    )
    .filter((s) => s.length > 0);
  const destructive: DestructiveStep[] = [];
  for (const s of statements) {
    const t = DROP_TABLE.exec(s);
    if (t) {
      destructive.push({ statement: `${s};`, table: t[1] as string });
      continue;
    }
    const c = DROP_COLUMN.exec(s) ?? ALTER_TYPE.exec(s);
    if (c) destructive.push({ statement: `${s};`, table: c[1] as string, column: c[2] as string });
  }
  return { file, destructive };
}

/**
 * Counts the rows each destructive step would touch in the database at `url`: every row of a
 * dropped table, the rows holding a value in a dropped or retyped column. A table the database
 * does not have yet touches no rows.
 */
export async function countRows(url: string, steps: DestructiveStep[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const s of steps) {
      const table = pg.escapeIdentifier(s.table);
      const where = s.column ? ` WHERE ${pg.escapeIdentifier(s.column)} IS NOT NULL` : "";
      const exists = await client.query("SELECT to_regclass($1) AS t", [s.table]);
      if (exists.rows[0]?.t === null) {
        s.rows = 0;
        continue;
      }
      const r = await client.query(`SELECT count(*)::bigint AS n FROM ${table}${where}`);
      s.rows = Number(r.rows[0]?.n ?? 0);
    }
  } finally {
    await client.end();
  }
}
