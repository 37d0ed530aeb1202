import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { GENERATED_NOTICE } from "../../src/generators/header.js";
import { generateTarget } from "../../src/generators/registry.js";
import { TEST_REQUIREMENTS } from "../../src/generators/tests/index.js";
import { writeFiles } from "../../src/generators/writer.js";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { ensureVenv, VENV_BIN, VENV_PYTHON } from "../support/python.js";

const EXAMPLE = "examples/helpdesk";

function generate(domainDir: string, outDir: string, target: string): void {
  const { ir, findings } = checkDomain(domainDir);
  if (!ir) throw new Error(findings.map((f) => f.message).join("; "));
  writeFiles(outDir, generateTarget(ir, target, outDir));
}

interface PytestRun {
  status: number | null;
  output: string;
  passed: number;
  failed: number;
  skipped: number;
}

/** Runs the generated suite the way a user would: pytest in tests/, BASE_URL pointing at the app. */
function runSuite(testsDir: string, baseUrl: string, extraEnv: Record<string, string> = {}): PytestRun {
  const r = spawnSync(VENV_PYTHON, ["-m", "pytest", "-q", "-rfEs"], {
    cwd: testsDir,
    env: { ...process.env, BASE_URL: baseUrl, PYTHONDONTWRITEBYTECODE: "1", ...extraEnv },
    encoding: "utf8",
    timeout: 300_000,
  });
  const output = `${r.stdout}${r.stderr}`;
  const count = (word: string): number => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
  return { status: r.status, output, passed: count("passed"), failed: count("failed"), skipped: count("skipped") };
}

describe("the generated black-box suite (--target tests)", () => {
  let root: string;
  let app: RunningBackend | undefined;
  let testsDir: string;

  beforeAll(async () => {
    ensureVenv(TEST_REQUIREMENTS);
    root = mkdtempSync(join(tmpdir(), "charter-gentests-"));
    const out = join(root, "runtime");
    generate(EXAMPLE, out, "tests");
    testsDir = join(out, "tests");
    const db = freshDatabase("charter_generated_suite");
    app = await startGeneratedBackend({ domainDir: EXAMPLE, outDir: out, backend: "postgres", databaseUrl: databaseUrl(db) });
  }, 600_000);

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("is lint-clean and formatted (ruff)", () => {
    execFileSync(join(VENV_BIN, "ruff"), ["check", "--no-cache", "--target-version", "py311", "--select", "E4,E7,E9,F,I,B,UP,RUF", "."], {
      cwd: testsDir,
      encoding: "utf8",
    });
    execFileSync(join(VENV_BIN, "ruff"), ["format", "--check", "--no-cache", "--line-length", "120", "."], {
      cwd: testsDir,
      encoding: "utf8",
    });
  });

  it("passes in full against the example app on PostgreSQL, twice in a row", () => {
    if (!app) throw new Error("no app");
    const cases = JSON.parse(readFileSync(join(testsDir, "cases.json"), "utf8")) as {
      uncovered: string[];
      transitions: unknown[];
      rules: unknown[];
      access: unknown[];
      deletes: unknown[];
    };
    expect(cases.uncovered).toEqual([]);
    for (const run of [1, 2]) {
      const r = runSuite(testsDir, app.url);
      expect(r.failed, `run ${run}:\n${r.output}`).toBe(0);
      expect(r.status, `run ${run}:\n${r.output}`).toBe(0);
      expect(r.skipped, r.output).toBe(0);
      // routes x 4 + rules + transitions + users x 2 + access cases + on_delete cases
      expect(r.passed).toBe(3 * 4 + cases.rules.length + cases.transitions.length + 3 * 2 + cases.access.length + cases.deletes.length);
    }
  }, 600_000);

  it("fails when the app does not enforce a rule of the contracts", async () => {
    // The same domain with the agent route's create rule taken out of the contract: the app built
    // from it accepts what the suite (built from the real contracts) expects to be refused.
    const loose = join(root, "loose");
    cpSync(EXAMPLE, join(loose, "domain"), { recursive: true });
    const contract = join(loose, "domain", "routes", "agent_api.contract.yaml");
    const text = readFileSync(contract, "utf8");
    const without = text.replace(/\n {6}validation:\n(?: {8}.*\n)+/, "\n");
    expect(without).not.toBe(text);
    writeFileSync(contract, without);
    const looseApp = await startGeneratedBackend({ domainDir: join(loose, "domain"), outDir: join(loose, "runtime"), backend: "memory" });
    try {
      const r = runSuite(testsDir, looseApp.url);
      expect(r.status, r.output).toBe(1);
      expect(r.failed, r.output).toBe(1);
      expect(r.output).toContain("FAILED test_routes.py::test_validation_rule_refuses[agent_api create: max_open_tickets");
      expect(r.output).toMatch(/assert 201 == 422/);
    } finally {
      await looseApp.stop();
    }
  }, 600_000);

  it("passes against a domain without auth on the memory backend, its auth tests skipped", async () => {
    const plain = join(root, "plain");
    cpSync(EXAMPLE, join(plain, "domain"), { recursive: true });
    rmSync(join(plain, "domain", "infra"), { recursive: true });
    generate(join(plain, "domain"), join(plain, "runtime"), "tests");
    const plainApp = await startGeneratedBackend({ domainDir: join(plain, "domain"), outDir: join(plain, "runtime"), backend: "memory" });
    try {
      const r = runSuite(join(plain, "runtime", "tests"), plainApp.url);
      expect(r.status, r.output).toBe(0);
      expect(r.failed, r.output).toBe(0);
      const cases = JSON.parse(readFileSync(join(plain, "runtime", "tests", "cases.json"), "utf8")) as {
        rules: unknown[];
        transitions: unknown[];
        deletes: unknown[];
      };
      expect(r.passed, r.output).toBe(3 * 4 + cases.rules.length + cases.transitions.length + cases.deletes.length);
      expect(r.output).toContain("the domain has no auth Infra contract");
    } finally {
      await plainApp.stop();
    }
  }, 600_000);

  it("is the same bytes when generated twice, every file under the @generated header", () => {
    const { ir } = checkDomain(EXAMPLE);
    if (!ir) throw new Error("the example does not compile");
    const a = generateTarget(ir, "tests", join(root, "a"));
    const b = generateTarget(ir, "tests", join(root, "b"));
    expect(a).toEqual(b);
    expect(a.map((f) => f.path).sort()).toEqual(
      [
        "cases.json",
        "charter_client.py",
        "conftest.py",
        "pytest.ini",
        "requirements.txt",
        "test_auth.py",
        "test_routes.py",
        "test_workflows.py",
      ].map((n) => `tests/${n}`),
    );
    for (const f of a) expect(f.content, f.path).toContain(GENERATED_NOTICE);
  });
});
