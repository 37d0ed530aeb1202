import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { checkDomain } from "../../compiler/index.js";
import { generateTarget, writeFiles } from "../../generators/index.js";
import { countRows, type DestructiveStep, type Plan, planGenerationAsync } from "../../plan/plan.js";
import { redactText } from "../intake/redact.js";
import { redactUrl } from "../store/store.js";
import type { ProposalPlan } from "../types.js";
import { RISK_LEVELS, type RiskFinding } from "./risk.js";
import { withCandidateAsync } from "./verify.js";

/** The Healer setting that names the app's database; else the `DATABASE_URL` the Healer runs with. */
export const APP_DATABASE_VARIABLE = "SVC_HEALER_APP_DATABASE_URL";
const COUNT_TIMEOUT_MS = 5000;

export interface PlanInput {
  root: string;
  scanRoot: string;
  /** The proposal's contract file (absolute) and its proposed text. */
  targetAbs: string;
  after: string;
  runtimeDir: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Plans the regeneration a proposal would cause, the way `charter plan` does, without touching the
 * project: the candidate domain lives in a scratch copy, and the plan only reads the runtime.
 */
export async function planProposal(input: PlanInput): Promise<ProposalPlan> {
  const generated = existsSync(join(input.runtimeDir, "backend", "app", "main.py"));
  const compared_with = generated ? "runtime" : "contracts";
  let plan: Plan;
  let sql: string | undefined;
  try {
    const made = await withCandidateAsync(input.scanRoot, input.targetAbs, input.after, async (domain, scratch) => {
      const candidate = checkDomain(domain);
      if (!candidate.ir) return `the proposed contracts do not compile (${candidate.errors} error(s))`;
      let output = input.runtimeDir;
      if (!generated) {
        // Nothing generated yet: the current contracts' output stands in for the app, so the plan
        // shows what this proposal changes rather than a whole new app.
        const current = checkDomain(input.scanRoot);
        if (!current.ir) return "no generated app to compare with, and the current contracts do not compile";
        output = join(scratch, "baseline");
        writeFiles(output, generateTarget(current.ir, "all", output));
      }
      const { plan: planned, files } = await planGenerationAsync(candidate.ir, "all", output);
      const sql = planned.migration ? files.find((f) => f.path === planned.migration?.file)?.content : undefined;
      return { plan: relativePlan(planned, input.root, generated), sql };
    });
    if (typeof made === "string") return { compared_with, plan: null, error: made };
    plan = made.plan;
    sql = made.sql;
  } catch (e) {
    return { compared_with, plan: null, error: redactText(e instanceof Error ? e.message : String(e)) };
  }
  const base: ProposalPlan = { compared_with, plan, ...(sql !== undefined ? { migration_sql: sql } : {}) };
  const steps = plan.migration?.destructive ?? [];
  if (steps.length === 0) return base;
  const rows_unknown = await countIn(input.env, steps);
  return rows_unknown ? { ...base, rows_unknown } : base;
}

/** Counts the rows on the app's database; returns why not when it cannot (nothing is thrown). */
async function countIn(env: NodeJS.ProcessEnv, steps: DestructiveStep[]): Promise<string | undefined> {
  const url = env[APP_DATABASE_VARIABLE]?.trim() || env.DATABASE_URL?.trim();
  if (!url) return `the Healer does not know the app's database (set ${APP_DATABASE_VARIABLE})`;
  if (!/^postgres(ql)?:\/\//.test(url)) return `the app's database is not PostgreSQL (${redactUrl(url)})`;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      countRows(url, steps),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${COUNT_TIMEOUT_MS / 1000} s`)), COUNT_TIMEOUT_MS);
      }),
    ]);
    return undefined;
  } catch (e) {
    for (const s of steps) delete s.rows;
    return `the app's database ${redactUrl(url)} could not be asked: ${redactText(e instanceof Error ? e.message : String(e))}`;
  } finally {
    clearTimeout(timer);
  }
}

/** The plan with its output and migration file named from the project root (a scratch path says "contracts"). */
function relativePlan(plan: Plan, root: string, generated: boolean): Plan {
  const output = generated ? relative(root, resolve(plan.output)) || "." : "(the current contracts' output)";
  const migration = plan.migration
    ? { ...plan.migration, file: generated ? join(output, plan.migration.file) : plan.migration.file }
    : null;
  return { ...plan, output, migration };
}

const rows = (n: number): string => `${n.toLocaleString("en-US")} ${n === 1 ? "row" : "rows"}`;

/**
 * The plan's facts as consequences: each destructive step (`destroys data`, with its rows), each
 * breaking API change (`breaks clients`), the rest as `info`; located in the migration file, or in
 * the proposal's contract for what the API does.
 */
export function planConsequences(pp: ProposalPlan, contractFile: string): RiskFinding[] {
  const at = (message: string, id: string, level: RiskFinding["level"]): RiskFinding => ({
    id,
    level,
    message,
    file: contractFile,
    line: 1,
    column: 1,
    path: "",
  });
  if (!pp.plan) return [at(`not planned: ${pp.error ?? "unknown reason"}`, "plan.unavailable", "info")];
  const p = pp.plan;
  const out: RiskFinding[] = [];
  for (const s of p.migration?.destructive ?? []) out.push(stepConsequence(s, pp, p.migration?.file ?? ""));
  if (p.api) {
    // One line per kind of change, naming every operation it touches (a removed field shows in
    // each operation that carries it).
    const groups = new Map<string, { level: "error" | "warning" | "info"; text: string; id: string; ops: string[] }>();
    for (const c of p.api.changes) {
      const removed = c.id === "api-removed-without-deprecation" || c.id === "endpoint-added";
      const key = removed ? `${c.id}\u0000${c.operation}` : `${c.id}\u0000${c.text}`;
      const g = groups.get(key) ?? { level: c.level, text: c.text, id: c.id, ops: [] };
      g.ops.push(c.operation);
      groups.set(key, g);
    }
    for (const g of groups.values()) {
      const breaking = g.level === "error";
      const message =
        g.id === "api-removed-without-deprecation"
          ? `removes operation ${g.ops[0]}`
          : g.id === "endpoint-added"
            ? `adds operation ${g.ops[0]}`
            : `${g.text} in ${g.ops.join(", ")}`;
      const subject = g.id === "api-removed-without-deprecation" || g.id === "endpoint-added" ? (g.ops[0] as string) : g.text;
      out.push(at(`${message}${breaking ? " (breaking)" : ""}`, `api.${g.id}#${subject}`, breaking ? "breaks clients" : "info"));
    }
  } else if (p.apiError) out.push(at(`API not compared: ${p.apiError}`, "api.unavailable", "info"));
  const n = p.added.length + p.changed.length + p.removed.length;
  if (n > 0) {
    const kept = p.kept.length ? `; keeps ${p.kept.length} file(s) edited by hand as they are` : "";
    const migration = p.migration ? `, with the migration \`${p.migration.file}\`` : "";
    out.push(
      at(
        `regenerates ${n} file(s) (${p.added.length} added, ${p.changed.length} changed, ${p.removed.length} removed)${migration}${kept}`,
        "plan.files",
        "info",
      ),
    );
  }
  return out;
}

function stepConsequence(s: DestructiveStep, pp: ProposalPlan, file: string): RiskFinding {
  const sql = pp.migration_sql;
  const what = /^\s*DROP TABLE/i.test(s.statement)
    ? { id: "drop_table", text: `drops table \`${s.table}\``, unit: "" }
    : /DROP COLUMN/i.test(s.statement)
      ? { id: "drop_column", text: `drops column \`${s.table}.${s.column}\``, unit: " with a value" }
      : { id: "alter_type", text: `changes the type of column \`${s.table}.${s.column}\``, unit: " with a value" };
  const count = s.rows === undefined ? `rows unknown: ${pp.rows_unknown ?? "not counted"}` : `${rows(s.rows)}${what.unit}`;
  // Where the statement sits in the migration: its first line.
  const first = s.statement.split("\n")[0]?.trim() ?? "";
  const index = sql ? sql.split("\n").findIndex((l) => first !== "" && l.includes(first)) : -1;
  return {
    id: `migration.${what.id}:${s.table}${s.column ? `.${s.column}` : ""}`,
    level: "destroys data",
    message: `${what.text} — ${count}`,
    file,
    line: index >= 0 ? index + 1 : 1,
    column: 1,
    path: "",
  };
}

/**
 * The consequences list: the plan's facts and the contract risk review's findings in one list,
 * most severe first (the plan's facts lead within a level: they carry the figures).
 */
export function mergeConsequences(plan: readonly RiskFinding[], risk: readonly RiskFinding[]): RiskFinding[] {
  const seen = new Set<string>();
  return [...plan, ...risk]
    .filter((f) => !seen.has(f.id) && seen.add(f.id))
    .sort((x, y) => RISK_LEVELS.indexOf(x.level) - RISK_LEVELS.indexOf(y.level));
}
