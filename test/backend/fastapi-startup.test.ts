import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend, startGeneratedBackend } from "../support/backend.js";
import { freePort } from "../support/net.js";
import { ensureVenvFromFile, VENV_PYTHON } from "../support/python.js";
import { client } from "./http.js";

/** Runs uvicorn on the generated app until it exits (at most `timeoutMs`), with `env` over ours minus `unset`. */
function runUntilExit(
  backendDir: string,
  env: Record<string, string>,
  port: number,
  unset: readonly string[] = [],
  timeoutMs = 30_000,
): Promise<{ code: number | null; output: string }> {
  const base = { ...(process.env as Record<string, string>) };
  for (const name of unset) delete base[name];
  return new Promise((resolveRun, reject) => {
    const child = spawn(VENV_PYTHON, ["-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port", String(port)], {
      cwd: backendDir,
      env: { ...base, PYTHONDONTWRITEBYTECODE: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`uvicorn still running after ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolveRun({ code, output });
    });
  });
}

/** The placeholder AUTH_SECRET guard of the generated config, checked on a real start. */
describe("generated FastAPI backend with the placeholder AUTH_SECRET", () => {
  let outDir: string;
  let backendDir: string;

  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), "charter-backend-startup-"));
    backendDir = generateBackend("examples/helpdesk", outDir);
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
  });

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it("refuses to start with APP_ENV=production: non-zero exit, one clear line, no traceback", async () => {
    const { code, output } = await runUntilExit(
      backendDir,
      { APP_ENV: "production", AUTH_SECRET: "change-me", AUTH_ENABLED: "true", DATABASE_BACKEND: "memory" },
      await freePort(),
    );
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(output).toContain("refusing to start: AUTH_SECRET still has its placeholder value");
    expect(output).not.toContain("Traceback");
  });

  it("refuses just the same when AUTH_SECRET is not set at all (the placeholder is its default)", async () => {
    const { code, output } = await runUntilExit(backendDir, { APP_ENV: "production", DATABASE_BACKEND: "memory" }, await freePort(), [
      "AUTH_SECRET",
      "AUTH_ENABLED",
    ]);
    expect(code).not.toBe(0);
    expect(output).toContain("refusing to start: AUTH_SECRET still has its placeholder value");
  });

  it("fails closed: refuses the placeholder when APP_ENV is unset or not a development value", async () => {
    for (const env of [{}, { APP_ENV: "staging" }, { APP_ENV: "prod" }]) {
      const { code, output } = await runUntilExit(
        backendDir,
        { AUTH_SECRET: "change-me", AUTH_ENABLED: "true", DATABASE_BACKEND: "memory", ...env },
        await freePort(),
        ["APP_ENV"],
      );
      expect(code, JSON.stringify(env)).not.toBe(0);
      expect(output).toContain("refusing to start: AUTH_SECRET still has its placeholder value");
      expect(output).not.toContain("Traceback");
    }
  });

  it("refuses an empty AUTH_SECRET, and APP_ENV=test, just the same: only development is lenient", async () => {
    const empty = await runUntilExit(
      backendDir,
      { APP_ENV: "production", AUTH_SECRET: "", AUTH_ENABLED: "true", DATABASE_BACKEND: "memory" },
      await freePort(),
    );
    expect(empty.code).not.toBe(0);
    expect(empty.output).toContain("refusing to start: AUTH_SECRET is empty");
    expect(empty.output).not.toContain("Traceback");
    const test = await runUntilExit(
      backendDir,
      { APP_ENV: "test", AUTH_SECRET: "change-me", AUTH_ENABLED: "true", DATABASE_BACKEND: "memory" },
      await freePort(),
    );
    expect(test.code).not.toBe(0);
    expect(test.output).toContain("only an explicit APP_ENV=development accepts it");
  });

  it("refuses a secret shorter than 32 bytes outside development, and starts with 32", async () => {
    const short = await runUntilExit(
      backendDir,
      { APP_ENV: "production", AUTH_SECRET: "x".repeat(31), AUTH_ENABLED: "true", DATABASE_BACKEND: "memory" },
      await freePort(),
    );
    expect(short.code).not.toBe(0);
    expect(short.output).toContain("refusing to start: AUTH_SECRET is shorter than 32 bytes");
    expect(short.output).not.toContain("Traceback");
    const x = await runUntilExit(backendDir, { APP_ENV: "production", AUTH_SECRET: "x", DATABASE_BACKEND: "memory" }, await freePort(), [
      "AUTH_ENABLED",
    ]);
    expect(x.output).toContain("refusing to start: AUTH_SECRET is shorter than 32 bytes");
    const app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir,
      backend: "memory",
      skipGenerate: true,
      env: { AUTH_SECRET: "y".repeat(32), AUTH_ENABLED: "true", APP_ENV: "production" },
    });
    await app.stop();
  });

  it("seeds the contract's bootstrap users only in development or when AUTH_SEED_USERS asks", async () => {
    const admin = { email: "admin@example.com", password: "admin-password" };
    const cases = [
      [{ APP_ENV: "production" }, 401],
      [{ APP_ENV: "production", AUTH_SEED_USERS: "false" }, 401],
      [{ APP_ENV: "production", AUTH_SEED_USERS: "true" }, 200],
      [{ APP_ENV: "development" }, 200],
    ] as const;
    for (const [env, status] of cases) {
      const app = await startGeneratedBackend({
        domainDir: "examples/helpdesk",
        outDir,
        backend: "memory",
        skipGenerate: true,
        env: { AUTH_ENABLED: "true", ...env },
        unset: "AUTH_SEED_USERS" in env ? [] : ["AUTH_SEED_USERS"],
      });
      try {
        expect((await client(app.url).post("/auth/login", admin)).status, JSON.stringify(env)).toBe(status);
      } finally {
        await app.stop();
      }
    }
  });

  it("starts in development with the placeholder and warns about it", async () => {
    const app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir,
      backend: "memory",
      skipGenerate: true,
      env: { AUTH_SECRET: "change-me", AUTH_ENABLED: "true", APP_ENV: "development" },
    });
    try {
      expect(app.logs()).toContain("AUTH_SECRET still has its placeholder value");
      const login = await client(app.url).post("/auth/login", { email: "admin@example.com", password: "admin-password" });
      expect(login.status).toBe(200);
      expect((await client(app.url, login.body.access_token).get("/tickets")).status).toBe(200);
    } finally {
      await app.stop();
    }
  });

  it("exits with a one-line reason for an invalid setting", async () => {
    const { code, output } = await runUntilExit(
      backendDir,
      { AUTH_SECRET: "a-real-secret-0123456789abcdef0123456789", DATABASE_BACKEND: "oracle" },
      await freePort(),
    );
    expect(code).not.toBe(0);
    expect(output).toContain("invalid settings: DATABASE_BACKEND:");
    expect(output).not.toContain("Traceback");
  });
});
