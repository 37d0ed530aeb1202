import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { GENERATORS, generateTarget } from "../../src/generators/registry.js";
import { writeFiles } from "../../src/generators/writer.js";
import { freePort } from "./net.js";
import { ensureVenvFromFile, VENV_PYTHON } from "./python.js";

/** A secret long enough for HS256 (the placeholder only warns outside production, but is short). */
export const TEST_AUTH_SECRET = "test-secret-0123456789abcdef0123456789abcdef";

export interface StartBackendOptions {
  /** Contract folder, e.g. `examples/helpdesk`. */
  domainDir: string;
  /** Output root; the backend lands in `<outDir>/backend`. */
  outDir: string;
  backend: "memory" | "postgres";
  /** Required for `postgres` (see test/support/postgres.ts `databaseUrl`). */
  databaseUrl?: string;
  /** Extra environment of the app (wins over the defaults: AUTH_SECRET, DATABASE_*). */
  env?: Record<string, string>;
  /** Variables removed from that environment (ours and the inherited ones), after `env`. */
  unset?: readonly string[];
  /** uvicorn workers (default 1). */
  workers?: number;
  /** Skip generation (the output is already there). */
  skipGenerate?: boolean;
  /** Port to listen on (default: a free one). A fixed port lets a frontend built against it be reused. */
  port?: number;
  /** Return once /health answers at all, not only 200 (a test of an app that is not ready). */
  anyHealth?: boolean;
  /** Start uvicorn with its access log on, as a plain `uvicorn app.main:app` does (default: off). */
  accessLog?: boolean;
}

export interface RunningBackend {
  /** e.g. `http://127.0.0.1:41234`, no trailing slash. */
  url: string;
  port: number;
  /** The uvicorn process (the leader of its process group). */
  pid: number;
  backendDir: string;
  /** stdout and stderr of uvicorn so far. */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Generates the backend of a domain (fastapi-prod, plus the postgres and migrations targets when
 * registered) into `outDir` and returns the backend folder.
 */
export function generateBackend(domainDir: string, outDir: string): string {
  const { ir, findings } = checkDomain(domainDir);
  if (!ir) throw new Error(`${domainDir} does not compile: ${findings.map((f) => f.message).join("; ")}`);
  for (const target of ["fastapi-prod", "postgres", "migrations"]) {
    if (!GENERATORS.some((g) => g.target === target)) continue;
    writeFiles(outDir, generateTarget(ir, target, outDir));
  }
  return join(outDir, "backend");
}

/**
 * Generates the backend, installs its requirements into the shared venv, starts it with uvicorn
 * on a free port of 127.0.0.1 and waits until /health answers 200.
 */
export async function startGeneratedBackend(options: StartBackendOptions): Promise<RunningBackend> {
  const backendDir = options.skipGenerate ? join(options.outDir, "backend") : generateBackend(options.domainDir, options.outDir);
  ensureVenvFromFile(join(backendDir, "requirements.txt"));
  if (options.backend === "postgres" && !options.databaseUrl) throw new Error("the postgres backend needs databaseUrl");
  const port = options.port ?? (await freePort());
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PYTHONUNBUFFERED: "1",
    PYTHONDONTWRITEBYTECODE: "1",
    AUTH_SECRET: TEST_AUTH_SECRET,
    // The tests sign in as the contract's bootstrap users, which production seeds only when asked.
    AUTH_SEED_USERS: "true",
    // Every answer is checked against its route's response model (app/responses.py), as in development.
    RESPONSE_VALIDATION: "on",
    DATABASE_BACKEND: options.backend,
    // As `charter dev` and compose run it; a test of the check alone sets off (or unsets it).
    DATABASE_MIGRATE: "auto",
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    ...options.env,
  };
  for (const name of options.unset ?? []) delete env[name];
  // --timeout-keep-alive as the image runs it (its Dockerfile): fetch's pool, not the server, closes
  // an idle connection, so a request never meets one the server is closing.
  const args = [
    "-m",
    "uvicorn",
    "app.main:app",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--no-proxy-headers",
    "--timeout-keep-alive",
    "75",
  ];
  if (!options.accessLog) args.push("--no-access-log");
  if (options.workers && options.workers > 1) args.push("--workers", String(options.workers));
  // The app's output goes to a file, not a pipe: a test that blocks Node's event loop (spawnSync of
  // a test suite) would stop draining a pipe, and an app that logs every request then blocks on a
  // full pipe in the middle of a request.
  const logDir = mkdtempSync(join(tmpdir(), "charter-backend-log-"));
  const logPath = join(logDir, "uvicorn.log");
  const logFd = openSync(logPath, "a");
  const child = spawn(VENV_PYTHON, args, { cwd: backendDir, env, stdio: ["ignore", logFd, logFd], detached: true });
  closeSync(logFd);
  let final: string | null = null;
  const output = (): string => {
    if (final !== null) return final;
    try {
      return readFileSync(logPath, "utf8");
    } catch {
      return "";
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const running: RunningBackend = {
    url,
    port,
    pid: child.pid ?? 0,
    backendDir,
    logs: output,
    stop: async () => {
      await stopProcess(child);
      // What the app wrote stays readable through logs() once its file is gone.
      if (final === null) final = output();
      rmSync(logDir, { recursive: true, force: true });
    },
  };
  try {
    await waitForHealth(url, child, output, options.anyHealth ?? false);
  } catch (e) {
    await running.stop();
    throw e;
  }
  return running;
}

async function waitForHealth(url: string, child: ChildProcess, logs: () => string, anyStatus: boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the backend exited with ${child.exitCode}:\n${logs()}`);
    try {
      const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      if (r.status === 200 || anyStatus) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`the backend did not answer /health within ${timeoutMs} ms:\n${logs()}`);
}

/** SIGTERM to the process group (uvicorn workers included), SIGKILL after 5 s. */
function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return Promise.resolve();
  const pid = child.pid;
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolveStop();
    });
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      clearTimeout(timer);
      resolveStop();
    }
  });
}
