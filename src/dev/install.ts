import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Log } from "./log.js";

/** A step that failed (pip, npm, next build): its name and the tail of its output. */
export class InstallError extends Error {}

/** Steps running now, so a stop during start-up ends them too. */
const runningSteps = new Set<ChildProcess>();

/** Ends every running step (SIGTERM): `charter dev` was stopped while installing or building. */
export function stopSteps(): void {
  for (const proc of runningSteps) proc.kill("SIGTERM");
}

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** Runs a command to completion, its output shown under `install` (the first run says what it does). */
export function runStep(
  log: Log,
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  quiet: RegExp = /^$/,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    runningSteps.add(proc);
    const tail: string[] = [];
    for (const stream of [proc.stdout, proc.stderr]) {
      createInterface({ input: stream }).on("line", (line) => {
        tail.push(line);
        if (tail.length > 30) tail.shift();
        if (!quiet.test(line)) log.child("install", line);
      });
    }
    proc.once("error", (e) => reject(new InstallError(`${command}: ${e.message}`)));
    proc.once("exit", (code) => {
      runningSteps.delete(proc);
      if (code === 0) resolve();
      else reject(new InstallError(`${command} ${args.join(" ")} failed (exit ${code}):\n${tail.join("\n")}`));
    });
  });
}

/**
 * Creates the Python virtual environment once and installs the backend's requirements into it;
 * a stamp holding the requirements' hash skips pip when they did not change. Returns its python
 * and whether packages were installed.
 */
export async function ensurePythonEnv(
  log: Log,
  venvDir: string,
  requirementsFile: string,
): Promise<{ python: string; installed: boolean }> {
  const python = join(venvDir, "bin", "python");
  if (!existsSync(python)) {
    log.info(`first run: creating the Python virtual environment ${venvDir}`);
    mkdirSync(dirname(venvDir), { recursive: true });
    await runStep(log, "python3", ["-m", "venv", venvDir], dirname(venvDir));
  }
  const requirements = readFileSync(requirementsFile, "utf8");
  const stamp = join(venvDir, `.charter-requirements-${sha(requirements)}`);
  if (existsSync(stamp)) return { python, installed: false };
  log.info("installing the backend's Python packages (pinned in backend/requirements.txt)");
  await runStep(
    log,
    python,
    ["-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off", "-r", requirementsFile],
    dirname(requirementsFile),
    process.env,
    /^(Requirement already satisfied|Looking in)/,
  );
  writeFileSync(stamp, requirements);
  return { python, installed: true };
}

/** Where each frontend build's standalone server is kept, inside the build folder. */
const SERVERS_DIR = ".charter-servers";

/** Files of the generated frontend, relative to its folder, minus what installs and builds add. */
function sourceFiles(root: string, rel = ""): string[] {
  const skip = new Set(["node_modules", ".next", SERVERS_DIR, "next-env.d.ts", "tsconfig.tsbuildinfo", "package-lock.json"]);
  const out: string[] = [];
  for (const name of readdirSync(join(root, rel)).sort()) {
    if (skip.has(name)) continue;
    const childRel = rel ? `${rel}/${name}` : name;
    if (statSync(join(root, childRel)).isDirectory()) out.push(...sourceFiles(root, childRel));
    else out.push(childRel);
  }
  return out;
}

export interface FrontendBuild {
  /** Folder of the standalone server (run `node server.js` there). */
  serverDir: string;
  built: boolean;
}

/**
 * The production build of the generated frontend, cached: the app is copied into
 * `<cacheDir>/frontend-<hash of package.json>` (node_modules kept between runs), and `next build`
 * runs only when the hash of its sources and API address differs from the last build's.
 */
export async function ensureFrontendBuild(log: Log, frontendDir: string, cacheDir: string, apiUrl: string): Promise<FrontendBuild> {
  const pkg = readFileSync(join(frontendDir, "package.json"), "utf8");
  const appDir = join(cacheDir, `frontend-${sha(pkg)}`);
  mkdirSync(appDir, { recursive: true });
  const wanted = new Set(sourceFiles(frontendDir));
  for (const rel of sourceFiles(appDir)) if (!wanted.has(rel) && rel !== ".charter-build") rmSync(join(appDir, rel));
  const hash = createHash("sha256").update(apiUrl);
  for (const rel of wanted) {
    const content = readFileSync(join(frontendDir, rel));
    hash.update(`\n${rel}\n`).update(content);
    const target = join(appDir, rel);
    if (existsSync(target) && readFileSync(target).equals(content)) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  const key = hash.digest("hex").slice(0, 16);
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NEXT_PUBLIC_API_URL: apiUrl };
  if (!existsSync(join(appDir, "node_modules", ".charter-installed"))) {
    log.info(`first run: installing the frontend's npm packages into ${appDir} (a few minutes)`);
    await runStep(log, "npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], appDir, env);
    writeFileSync(join(appDir, "node_modules", ".charter-installed"), pkg);
  }
  const stampPath = join(appDir, ".charter-build");
  // Each build's server runs from a copy of its own: `next build` empties .next/ first, and a
  // rebuild in the background must not pull the files from under the server still serving.
  const serversDir = join(appDir, SERVERS_DIR);
  const serverDir = join(serversDir, key);
  if (existsSync(stampPath) && readFileSync(stampPath, "utf8") === key && existsSync(join(serverDir, "server.js"))) {
    return { serverDir, built: false };
  }
  log.info("building the frontend (next build; cached until the generated frontend changes)");
  await runStep(log, join(appDir, "node_modules", ".bin", "next"), ["build"], appDir, { ...env, NODE_ENV: "production" });
  // Kept: the newest earlier server (it may be serving until this one is ready); older ones go.
  const earlier = existsSync(serversDir)
    ? readdirSync(serversDir)
        .filter((d) => d !== key)
        .map((d) => ({ d, at: statSync(join(serversDir, d)).mtimeMs }))
        .sort((a, b) => b.at - a.at)
    : [];
  for (const { d } of earlier.slice(1)) rmSync(join(serversDir, d), { recursive: true, force: true });
  rmSync(serverDir, { recursive: true, force: true });
  cpSync(join(appDir, ".next", "standalone"), serverDir, { recursive: true });
  // The standalone server serves static assets only from its own .next/static, as the Dockerfile copies them.
  cpSync(join(appDir, ".next", "static"), join(serverDir, ".next", "static"), { recursive: true });
  writeFileSync(stampPath, key);
  return { serverDir, built: true };
}
