import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkDomain } from "../../src/compiler/compile-path.js";
import type { DomainIR } from "../../src/compiler/index.js";
import { generateTarget } from "../../src/generators/registry.js";
import { TEST_REQUIREMENTS } from "../../src/generators/tests/index.js";
import { writeFiles } from "../../src/generators/writer.js";
import { prepareNextApp } from "../frontend/support/next-app.mjs";
import { startGeneratedBackend } from "./backend.js";
import { writeDomain } from "./domain.js";
import { databaseUrl, freshDatabase, PG_HOST, PG_PORT, PG_USER } from "./postgres.js";
import { ensureVenv, ensureVenvFromFile, VENV_BIN, VENV_PYTHON } from "./python.js";
import type { Refusal } from "./random-domain.js";
import { runSchemathesis } from "./schemathesis.js";

/**
 * The whole life of one domain, as a user gets it: validate, generate every target, the linters and
 * type checkers of both halves, the schema applied by psql, then the app on PostgreSQL and on memory
 * passing its own generated suite and a short schemathesis run. Shared by the property test
 * (test/generators/random-domains.test.ts) and bench/random-domains.mjs.
 */

const REPO = resolve(import.meta.dirname, "../..");

export interface StepResult {
  step: string;
  ok: boolean;
  ms: number;
  /** The tail of what the step printed (the whole of it for a failure is too much to report). */
  output: string;
}

export interface PipelineOptions {
  /** A short, unique name for the run's database (a-z, 0-9, _). */
  tag: string;
  /** Folder for the generated app and the tools' output. */
  root: string;
  /** schemathesis `--max-examples` per operation and phase. */
  maxExamples: number;
  seed: number;
  /** mypy's cache: shared between runs, it only rechecks what changed (its entries are keyed by content). */
  mypyCache: string;
  log?: (line: string) => void;
  /**
   * The refusal a domain drawn with a name past PostgreSQL's limit must get: validation passes
   * when it refuses so (and nothing else), and nothing is generated.
   */
  refusal?: Refusal | null;
}

interface Exec {
  code: number | null;
  output: string;
}

/** Runs a command without blocking the event loop (a running app answers meanwhile). */
function exec(cmd: string, args: readonly string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 300_000): Promise<Exec> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, timeout: timeoutMs });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.on("error", fail);
    child.on("close", (code) => done({ code, output }));
  });
}

const tail = (s: string, n = 6000): string => (s.length > n ? `…${s.slice(-n)}` : s);

/**
 * The frontend's npm packages are installed once, in a folder keyed by its package.json with the
 * domain's name taken out (it is the only part that varies), and each domain's sources are synced in.
 */
export function typecheckFolder(outDir: string, slot = "typecheck"): string {
  const files: { path: string; content: string }[] = [];
  const walk = (rel: string): void => {
    const abs = join(outDir, rel);
    for (const name of readdirSync(abs).sort()) {
      const childRel = `${rel}/${name}`;
      if (statSync(join(outDir, childRel)).isDirectory()) walk(childRel);
      else files.push({ path: childRel, content: readFileSync(join(outDir, childRel), "utf8") });
    }
  };
  walk("frontend");
  const pkgFile = files.find((f) => f.path === "frontend/package.json");
  if (!pkgFile) throw new Error("no frontend/package.json was generated");
  pkgFile.content = `${JSON.stringify({ ...JSON.parse(pkgFile.content), name: "charter-typecheck" }, null, 2)}\n`;
  const { appDir } = prepareNextApp(files, { slot });
  // What `next build` would write first: the types of image and CSS imports.
  const env = join(appDir, "next-env.d.ts");
  if (!existsSync(env)) writeFileSync(env, '/// <reference types="next" />\n/// <reference types="next/image-types/global" />\n');
  return appDir;
}

/** Runs every step; a failed step stops the ones that depend on it. */
export async function runPipeline(files: Record<string, string>, options: PipelineOptions): Promise<StepResult[]> {
  const results: StepResult[] = [];
  const log = options.log ?? (() => {});
  const step = async (name: string, fn: () => Promise<Exec | string> | Exec | string): Promise<boolean> => {
    const t0 = Date.now();
    let ok: boolean;
    let output: string;
    try {
      const r = await fn();
      ok = typeof r === "string" || r.code === 0;
      output = typeof r === "string" ? r : r.output;
    } catch (e) {
      ok = false;
      output = e instanceof Error ? (e.stack ?? e.message) : String(e);
    }
    const ms = Date.now() - t0;
    results.push({ step: name, ok, ms, output: tail(output) });
    // The whole output, kept with the app for a failure to be read in full.
    writeFileSync(join(options.root, `step-${results.length}-${name.replace(/[^a-z0-9]+/g, "-")}.log`), output);
    log(`${ok ? "ok  " : "FAIL"} ${name} (${ms} ms)`);
    return ok;
  };

  mkdirSync(options.root, { recursive: true });
  const domainDir = writeDomain(files);
  const out = join(options.root, "out");
  const backend = join(out, "backend");
  const compiled: { ir?: DomainIR } = {};
  const refusal = options.refusal ?? null;
  if (refusal !== null) {
    await step("validate refuses name > 63 B", () => {
      const { ir, findings } = checkDomain(domainDir);
      const errors = findings.filter((f) => f.severity !== "warning");
      const expected = `name.too_long ${refusal.file} /${refusal.path.join("/")}`;
      const got = errors.map(
        (f) => `${f.code} ${f.file.endsWith(`/${refusal.file}`) ? refusal.file : f.file} ${f.path}${f.line > 0 ? "" : " (not located)"}`,
      );
      if (ir !== null || got.length !== 1 || got[0] !== expected) throw new Error(`expected only ${expected}, got:\n${got.join("\n")}`);
      return `refused as expected: ${errors[0]?.file}:${errors[0]?.line}:${errors[0]?.column} ${errors[0]?.message}`;
    });
    return results;
  }
  const validated = await step("validate", () => {
    const { ir, findings } = checkDomain(domainDir);
    const errors = findings.filter((f) => f.severity !== "warning");
    if (!ir || errors.length > 0) throw new Error(errors.map((f) => `${f.file}:${f.line}:${f.column} ${f.message}`).join("\n"));
    compiled.ir = ir;
    return "";
  });
  const ir = compiled.ir;
  if (!validated || !ir) return results;
  if (
    !(await step("generate all targets", () => {
      writeFiles(out, generateTarget(ir, "all", out));
      return "";
    }))
  ) {
    return results;
  }

  ensureVenvFromFile(join(backend, "requirements.txt"));
  ensureVenv([...TEST_REQUIREMENTS, "mypy==2.4.1"]);
  await step("ruff check", () => exec(join(VENV_BIN, "ruff"), ["check", "--no-cache", "."], backend));
  await step("ruff format --check", () => exec(join(VENV_BIN, "ruff"), ["format", "--check", "--no-cache", "."], backend));
  await step("mypy", () => exec(join(VENV_BIN, "mypy"), ["--cache-dir", options.mypyCache, "app"], backend));
  const frontend = join(out, "frontend");
  // A domain without pages has no frontend.
  const hasFrontend = existsSync(join(frontend, "package.json"));
  if (hasFrontend) {
    await step("biome check", () => exec(join(REPO, "node_modules/.bin/biome"), ["check", "--max-diagnostics=50", "."], frontend));
    await step("tsc", () => {
      const appDir = typecheckFolder(out);
      return exec(join(appDir, "node_modules/.bin/tsc"), ["--noEmit", "-p", "tsconfig.json"], appDir);
    });
  }

  const db = freshDatabase(`charter_rand_${options.tag}`);
  const schemaOk = await step("psql applies the schema", () =>
    exec(
      "psql",
      [
        "-h",
        PG_HOST,
        "-p",
        String(PG_PORT),
        "-U",
        PG_USER,
        "-d",
        db,
        "-v",
        "ON_ERROR_STOP=1",
        "-X",
        "-q",
        "-f",
        join(backend, "db/schema.sql"),
      ],
      backend,
    ),
  );

  for (const kind of ["postgres", "memory"] as const) {
    if (kind === "postgres" && !schemaOk) continue;
    let app: Awaited<ReturnType<typeof startGeneratedBackend>> | null = null;
    const started = await step(`start on ${kind}`, async () => {
      app = await startGeneratedBackend({
        domainDir,
        outDir: out,
        backend: kind,
        skipGenerate: true,
        ...(kind === "postgres" ? { databaseUrl: databaseUrl(db) } : {}),
      });
      return "";
    });
    const running = app as Awaited<ReturnType<typeof startGeneratedBackend>> | null;
    if (!started || !running) continue;
    try {
      await step(`generated suite on ${kind}`, async () => {
        const r = await exec(VENV_PYTHON, ["-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider"], join(out, "tests"), {
          BASE_URL: running.url,
          PYTHONDONTWRITEBYTECODE: "1",
        });
        return { code: r.code, output: `${r.output}\n--- app log ---\n${tail(running.logs(), 3000)}` };
      });
      const fuzzDir = join(options.root, `fuzz-${kind}`);
      mkdirSync(fuzzDir, { recursive: true });
      await step(`schemathesis on ${kind}`, async () => {
        const r = await runSchemathesis({ baseUrl: running.url, dir: fuzzDir, seed: options.seed, maxExamples: options.maxExamples });
        const traceback = running.logs().includes("Traceback");
        return {
          code: r.code === 0 && r.generated > 0 && !traceback ? 0 : 1,
          output: `${r.output}\n--- app log ---\n${tail(running.logs(), 3000)}`,
        };
      });
    } finally {
      await running.stop();
    }
  }
  return results;
}
