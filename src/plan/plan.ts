import { readFileSync } from "node:fs";
import { diffLines } from "diff";
import { LineCounter, parseDocument } from "yaml";
import type { DomainIR } from "../compiler/ir.js";
import { toPointer } from "../contracts/findings.js";
import { locate } from "../contracts/locate.js";
import { type GeneratedFile, generateTarget, readExisting, resolveTargets, writeFiles } from "../generators/index.js";
import { WARNING_PREFIX } from "../generators/postgres/convertor.js";
import type { GenerationWarning } from "../generators/types.js";
import { type ApiPlan, planApi, planApiAsync } from "./api.js";

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

/**
 * A generator's warning about a file generate would write, located as a finding: in the generated
 * file (the line of the step it is about) and, when the step comes from a contract that still
 * declares it, in that contract (the field, else the entity).
 */
export interface PlanFinding {
  /** `generate.destructive` (data may be lost) or `generate.review` (may fail or hold back). */
  code: string;
  severity: "warning";
  message: string;
  /** The generated file, relative to the output folder, and the 1-based place of the step; line 0 when it has none. */
  file: string;
  line: number;
  column: number;
  contract?: { file: string; line: number; column: number; path: string; fqn: string };
}

/** What a plan would do, counted: files, and the API's operations and property changes. */
export interface PlanSummary {
  files: { add: number; change: number; remove: number; keep: number };
  operations: { added: number; removed: number; changed: number };
  properties: { added: number; removed: number; changed: number; breaking: number };
  findings: number;
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
  /** The generators' warnings about the files generate would write. */
  findings: PlanFinding[];
  summary: PlanSummary;
}

/**
 * What `charter forge generate` would do, computed the way it does it (the same generators and the
 * writer's dry run, which tells hand-edited files apart by the manifest's hashes), with nothing written.
 */
export function planGeneration(ir: DomainIR, target: string, output: string): { plan: Plan; files: GeneratedFile[] } {
  const { plan, files } = planFiles(ir, target, output);
  const whole = { ...plan, ...apiOf(() => planApi(output, files)) };
  return { plan: { ...whole, summary: summarize(whole) }, files };
}

/**
 * `planGeneration` that does not block the event loop while Python builds the two OpenAPI
 * documents (the Healer plans proposals while it serves reports).
 */
export async function planGenerationAsync(ir: DomainIR, target: string, output: string): Promise<{ plan: Plan; files: GeneratedFile[] }> {
  const { plan, files } = planFiles(ir, target, output);
  let api: { api: ApiPlan | null; apiError?: string };
  try {
    api = { api: await planApiAsync(output, files) };
  } catch (e) {
    api = { api: null, apiError: e instanceof Error ? e.message : String(e) };
  }
  const whole = { ...plan, ...api };
  return { plan: { ...whole, summary: summarize(whole) }, files };
}

/** Everything of a plan but its API part: the files, the migration and the generators' warnings. */
function planFiles(
  ir: DomainIR,
  target: string,
  output: string,
): { plan: Omit<Plan, "summary" | "api" | "apiError">; files: GeneratedFile[] } {
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
  const written = outcome.written.flatMap((p) => byPath.get(p) ?? []);
  const plan: Omit<Plan, "summary" | "api" | "apiError"> = {
    target,
    output,
    added,
    changed,
    removed: outcome.removed,
    kept: outcome.kept.map((k) => ({ path: k.path, reason: k.reason, stale: k.stale })),
    migration,
    findings: planFindings(ir, written),
  };
  return { plan, files };
}

/** The counts of a plan's summary line and of `summary` in its JSON. */
export function summarize(p: Omit<Plan, "summary">): PlanSummary {
  const api = p.api?.counts;
  return {
    files: { add: p.added.length, change: p.changed.length, remove: p.removed.length, keep: p.kept.length },
    operations: api?.operations ?? { added: 0, removed: 0, changed: 0 },
    properties: api?.properties ?? { added: 0, removed: 0, changed: 0, breaking: 0 },
    findings: p.findings.length,
  };
}

/** Every warning the generators attached to the files generate would write, each located. */
export function planFindings(ir: DomainIR, files: readonly GeneratedFile[]): PlanFinding[] {
  const contracts = new ContractLocator(ir);
  const out: PlanFinding[] = [];
  for (const f of files) {
    const lines = f.content.split("\n");
    for (const w of f.warnings ?? []) {
      // The SQL carries each warning as a comment right above its step (convertor.ts).
      const index = lines.indexOf(`${WARNING_PREFIX}${w.kind}: ${w.message}`);
      const contract = contracts.locate(w);
      out.push({
        code: `generate.${w.kind}`,
        severity: "warning",
        message: w.message,
        file: f.path,
        line: index + 1,
        column: index < 0 ? 0 : 1,
        ...(contract ? { contract } : {}),
      });
    }
  }
  return out;
}

/** Finds the contract node a warning's table and column come from; each contract file is parsed once. */
class ContractLocator {
  private readonly parsed = new Map<string, { doc: ReturnType<typeof parseDocument>; lines: LineCounter } | null>();
  constructor(private readonly ir: DomainIR) {}

  locate(w: GenerationWarning): PlanFinding["contract"] | undefined {
    const entity = w.table === undefined ? undefined : this.ir.entities.find((e) => e.table === w.table);
    if (!entity) return undefined;
    const source = this.parse(entity.file);
    // A field the entity declares itself is pointed at; one from a mixin or the system, the entity's name.
    const column = w.column;
    const own = column !== undefined && source?.doc.hasIn(["spec", "fields", column]) === true;
    const path = own && column !== undefined ? ["spec", "fields", column] : ["metadata", "name"];
    const pos = source === null ? { line: 0, column: 0 } : locate(source.doc, source.lines, path, { key: own });
    return { file: entity.file, line: pos.line, column: pos.column, path: toPointer(path), fqn: entity.fqn };
  }

  private parse(file: string): { doc: ReturnType<typeof parseDocument>; lines: LineCounter } | null {
    if (!this.parsed.has(file)) {
      let value: { doc: ReturnType<typeof parseDocument>; lines: LineCounter } | null = null;
      try {
        const lines = new LineCounter();
        value = { doc: parseDocument(readFileSync(file, "utf8"), { lineCounter: lines }), lines };
      } catch {
        // The contract was read a moment ago by the compiler; gone now, the finding keeps its table only.
      }
      this.parsed.set(file, value);
    }
    return this.parsed.get(file) ?? null;
  }
}

/** The API part of a plan: a failure to build an OpenAPI document is reported, not fatal. */
function apiOf(plan: () => ApiPlan | null): { api: ApiPlan | null; apiError?: string } {
  try {
    return { api: plan() };
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
  // The driver loads only when a database is asked: `charter plan` without one, and every other
  // command that imports the planner, start without it.
  const { default: pg } = await import("pg");
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
