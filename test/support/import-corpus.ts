import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { generateTarget } from "../../src/generators/registry.js";
import { TEST_REQUIREMENTS } from "../../src/generators/tests/index.js";
import { writeFiles } from "../../src/generators/writer.js";
import { detectDialect } from "../../src/importers/factory/sql.js";
import type { ImportNote } from "../../src/importers/model.js";
import { startGeneratedBackend } from "./backend.js";
import { inputFiles } from "./import-judges/sql.js";
import { databaseUrl, freshDatabase } from "./postgres.js";
import { ensureVenv, VENV_PYTHON } from "./python.js";

/**
 * The corpus of real public inputs (test/fixtures/import-corpus/<name>/: the input, its LICENSE and
 * SOURCE.json naming repository, commit and paths) and the run a new user would make with each:
 * import -> validate -> generate -> the app on PostgreSQL -> the generated black-box suite.
 */
export const CORPUS_DIR = resolve("test/fixtures/import-corpus");

export interface CorpusInput {
  name: string;
  /** The folder the command's path is relative to (the fixture's, or .cache/import-corpus/<name>). */
  dir: string;
  /** Listed in bench/import-corpus-external/, its files brought to .cache/import-corpus/ (never committed). */
  external?: boolean;
  format: string;
  /** `factory:<path>` or `extract:<path>`, the path inside the input's folder. */
  command: string;
  repository: string;
  commit: string;
}

export type Stage = "import" | "validate" | "generate" | "start" | "suite";

export interface CorpusResult {
  name: string;
  format: string;
  ok: boolean;
  /** The stage that failed, or null when every stage passed. */
  failedAt: Stage | null;
  entities: number;
  routes: number;
  notes: number;
  importMs: number;
  totalMs: number;
  /** pytest's counts (passed / failed / skipped) when the suite ran. */
  suite: { passed: number; failed: number; skipped: number } | null;
  /** The import's fidelity report (--report), counts only. */
  fidelity: { carried: number; changed: number; left_out: number; silent: number } | null;
  /** The independent judge of the input's format, when there is one for it. */
  judged: { compared: number; silent: { subject: string; fact: string; detail: string }[] } | null;
  /** Why no judge ran, when none did. */
  unjudged?: string;
  detail: string;
}

export function corpusInputs(): CorpusInput[] {
  return readdirSync(CORPUS_DIR)
    .filter((n) => existsSync(join(CORPUS_DIR, n, "SOURCE.json")))
    .sort()
    .map((name) => {
      const s = JSON.parse(readFileSync(join(CORPUS_DIR, name, "SOURCE.json"), "utf8")) as Record<string, string>;
      return {
        name,
        dir: join(CORPUS_DIR, name),
        format: String(s.format),
        command: String(s.command),
        repository: String(s.repository),
        commit: String(s.commit),
      };
    });
}

/** Manifests of inputs kept out of the repository: `{name, repository, commit, paths, license, format, command}`. */
export const EXTERNAL_DIR = resolve("bench/import-corpus-external");
export const EXTERNAL_CACHE = resolve(".cache/import-corpus");

/** The external inputs, each with whether its files are present under .cache/import-corpus/<name>/. */
export function externalInputs(): (CorpusInput & { present: boolean })[] {
  if (!existsSync(EXTERNAL_DIR)) return [];
  return readdirSync(EXTERNAL_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const s = JSON.parse(readFileSync(join(EXTERNAL_DIR, f), "utf8")) as Record<string, string>;
      const name = String(s.name);
      const dir = join(EXTERNAL_CACHE, name);
      const rel = String(s.command).split(":")[1] ?? "";
      return {
        name,
        dir,
        external: true,
        present: existsSync(join(dir, rel)),
        format: String(s.format),
        command: String(s.command),
        repository: String(s.repository),
        commit: String(s.commit),
      };
    });
}

const CLI = resolve("dist/cli/charter.js");

/** One input, all the way; never throws for a failure of the input (that is the result). */
export async function runCorpusInput(input: CorpusInput): Promise<CorpusResult> {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), `charter-corpus-${input.name}-`));
  const domain = input.name.replace(/[^a-z0-9]+/g, "_");
  const domainDir = join(root, domain);
  const result: CorpusResult = {
    name: input.name,
    format: input.format,
    ok: false,
    failedAt: "import",
    entities: 0,
    routes: 0,
    notes: 0,
    importMs: 0,
    totalMs: 0,
    suite: null,
    fidelity: null,
    judged: null,
    detail: "",
  };
  try {
    const [kind, rel] = input.command.split(":") as [string, string];
    const source = join(input.dir, rel);
    const reportFile = join(root, "fidelity.json");
    const args =
      kind === "extract"
        ? [CLI, "extract", source, "--yes", "--routes"]
        : [CLI, "factory", "migrate", source, ...(input.format === "openapi" ? [] : ["--from", input.format]), "--routes"];
    const t0 = Date.now();
    const imp = spawnSync(
      process.execPath,
      [...args, "--domain", domain, "--output", domainDir, "--no-llm", "--format", "json", "--report", reportFile],
      {
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" },
        timeout: 120_000,
        // The JSON summary of a large spec runs to megabytes (2.2 MB for Discord's); the default
        // buffer of 1 MB cut it off and the import was counted as failed.
        maxBuffer: 1 << 28,
      },
    );
    result.importMs = Date.now() - t0;
    if (imp.status !== 0) {
      result.detail = lastLines(`${imp.stdout}\n${imp.stderr}`, 6);
      return result;
    }
    const summary = JSON.parse(imp.stdout) as { entities?: string[]; accepted?: string[]; routes?: string[]; notes: ImportNote[] };
    result.entities = (summary.entities ?? summary.accepted ?? []).length;
    result.notes = summary.notes.length;
    if (existsSync(reportFile)) {
      const f = JSON.parse(readFileSync(reportFile, "utf8")) as NonNullable<CorpusResult["fidelity"]>;
      result.fidelity = { carried: f.carried, changed: f.changed, left_out: f.left_out, silent: f.silent };
    }
    await runJudge(input, source, domainDir, summary.notes, result);
    result.failedAt = "validate";
    const { ir, findings } = checkDomain(domainDir);
    const errors = findings.filter((f) => f.severity === "error");
    if (!ir || errors.length > 0) {
      result.detail = errors
        .slice(0, 3)
        .map((f) => `${f.file}: ${f.message}`)
        .join("; ");
      return result;
    }
    result.routes = ir.routes.length;
    result.failedAt = "generate";
    const out = join(root, "runtime");
    writeFiles(out, generateTarget(ir, "tests", out));
    result.failedAt = "start";
    ensureVenv(TEST_REQUIREMENTS);
    const app = await startGeneratedBackend({
      domainDir,
      outDir: out,
      backend: "postgres",
      databaseUrl: databaseUrl(freshDatabase(`corpus_${domain}`)),
    });
    try {
      result.failedAt = "suite";
      const r = spawnSync(VENV_PYTHON, ["-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider"], {
        cwd: join(out, "tests"),
        env: { ...process.env, BASE_URL: app.url, PYTHONDONTWRITEBYTECODE: "1" },
        encoding: "utf8",
        timeout: 600_000,
        maxBuffer: 1 << 28,
      });
      const output = `${r.stdout}${r.stderr}`;
      if (process.env.CORPUS_KEEP === "1") writeFileSync(join(root, "suite.log"), output);
      const count = (w: string): number => Number(new RegExp(`(\\d+) ${w}`).exec(output)?.[1] ?? 0);
      result.suite = { passed: count("passed"), failed: count("failed") + count("error"), skipped: count("skipped") };
      if (r.status === 0) {
        result.ok = true;
        result.failedAt = null;
      } else
        result.detail = lastLines(
          output
            .split("\n")
            .filter((l) => /^(FAILED|ERROR)/.test(l))
            .join("\n") || output,
          6,
        );
    } finally {
      await app.stop();
    }
  } catch (e) {
    result.detail = lastLines(e instanceof Error ? e.message : String(e), 6);
  } finally {
    result.totalMs = Date.now() - started;
    // CORPUS_KEEP=1 keeps the domain, the app and the suite's output for a closer look.
    if (process.env.CORPUS_KEEP === "1") result.detail += `\n(kept in ${root})`;
    else rmSync(root, { recursive: true, force: true });
  }
  return result;
}

/**
 * The independent judge of the input's format (test/support/import-judges/<format>.ts), when one
 * exists; a judge that fails is reported, never fatal to the working-app stages.
 */
async function runJudge(input: CorpusInput, source: string, domainDir: string, notes: ImportNote[], result: CorpusResult): Promise<void> {
  const judgeName =
    input.format === "sql"
      ? sqlDialectOf(source) === "mysql"
        ? "mysql"
        : "sql"
      : input.command.startsWith("extract:")
        ? "extract"
        : input.format;
  const file = resolve(`test/support/import-judges/${judgeName}.ts`);
  if (!existsSync(file)) {
    result.unjudged = `no judge for ${judgeName}`;
    return;
  }
  try {
    const mod = (await import(`./import-judges/${judgeName}.js`)) as {
      judge: (a: {
        inputPath: string;
        domainDir: string;
        notes: ImportNote[];
      }) => Promise<NonNullable<CorpusResult["judged"]> & { unjudged?: string[] }>;
    };
    const r = await mod.judge({ inputPath: source, domainDir, notes });
    // A judge that compared nothing found nothing: say so, with what kept it out, never "0 silent".
    if (r.compared === 0) result.unjudged = `judge compared no fact${r.unjudged?.length ? `: ${r.unjudged.slice(-2).join("; ")}` : ""}`;
    else result.judged = { compared: r.compared, silent: r.silent };
  } catch (e) {
    result.unjudged = `judge failed: ${lastLines(e instanceof Error ? e.message : String(e), 2)}`;
  }
}

function sqlDialectOf(source: string): "postgres" | "mysql" {
  const files = statSync(source).isDirectory() ? inputFiles(source) : [source];
  return detectDialect(files.map((f) => readFileSync(f, "utf8")).join("\n"));
}

function lastLines(text: string, n: number): string {
  return text.trim().split("\n").slice(-n).join("\n");
}
