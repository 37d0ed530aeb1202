import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { needsFullTier } from "./tiers.js";

/** The shared virtual environment for running generated Python (reused across runs and suites). */
export const VENV_DIR = resolve(".cache/venv");
export const VENV_PYTHON = join(VENV_DIR, "bin", "python");
export const VENV_BIN = join(VENV_DIR, "bin");

/** The ruff that lints generated Python, pinned as in scripts/setup.sh so CI and local runs agree. */
export const RUFF_REQUIREMENT = "ruff==0.17.6";

/**
 * Creates the virtual environment once and installs `requirements` (pip lines) into it. Concurrent
 * test files share one venv, so installs are serialised by a lock file; a stamp per requirement
 * set skips pip when nothing changed.
 */
export function ensureVenv(requirements: readonly string[] = []): string {
  needsFullTier("Python");
  mkdirSync(resolve(".cache"), { recursive: true });
  withLock(resolve(".cache/venv.lock"), () => {
    if (!existsSync(VENV_PYTHON)) {
      execFileSync("python3", ["-m", "venv", VENV_DIR], { stdio: "inherit" });
      execFileSync(VENV_PYTHON, ["-m", "pip", "install", "--quiet", "--upgrade", "pip"], { stdio: "inherit" });
    }
    const wanted = [RUFF_REQUIREMENT, ...requirements].map((r) => r.trim()).filter((r) => r && !r.startsWith("#"));
    const stamp = join(VENV_DIR, `.stamp-${createHash("sha256").update(wanted.join("\n")).digest("hex").slice(0, 16)}`);
    if (!existsSync(stamp)) {
      execFileSync(VENV_PYTHON, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", ...wanted], { stdio: "inherit" });
      writeFileSync(stamp, wanted.join("\n"));
    }
  });
  return VENV_PYTHON;
}

/** Installs the requirements listed in a requirements.txt file. */
export function ensureVenvFromFile(requirementsFile: string): string {
  const lines = readFileSync(requirementsFile, "utf8").split("\n");
  return ensureVenv(lines);
}

function withLock(lockPath: string, fn: () => void): void {
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx");
      closeSync(fd);
      break;
    } catch {
      // A lock older than 15 minutes belongs to a run that died.
      try {
        if (Date.now() - statSync(lockPath).mtimeMs > 15 * 60_000) rmSync(lockPath, { force: true });
      } catch {
        // The holder released it meanwhile.
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockPath}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

/**
 * Runs a Python script of test cases inside a generated backend (its `app` package importable),
 * with the tests' virtual environment, and returns the lines it printed: by convention, the name
 * of each case that passed. A case that fails raises, and the script's traceback fails the test.
 */
export function runCasesInBackend(
  backendDir: string,
  name: string,
  script: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): string[] {
  const path = join(backendDir, "..", name);
  writeFileSync(path, script);
  const out = execFileSync(VENV_PYTHON, [path, ...args], {
    cwd: backendDir,
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: backendDir, PYTHONDONTWRITEBYTECODE: "1", ...env },
    timeout: 120_000,
  });
  return out.trim().split("\n");
}
