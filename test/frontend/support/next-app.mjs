// Builds and serves a generated Next.js frontend for tests and the benchmark. Plain ESM (with JSDoc
// types) so bench/frontend.mjs can use it without a TypeScript loader.
//
// Installing the app's dependencies takes a while, so the app is built in a reusable folder keyed
// by the hash of its generated package.json: .cache/nextjs/app-<hash>/ keeps node_modules and the
// .next cache between runs, and the npm cache lives in .cache/npm. Generated files are synced into
// that folder (stale ones removed), so only what changed is rebuilt.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { runInNewContext } from "node:vm";
import { gzipSync } from "node:zlib";

export const REPO_ROOT = resolve(import.meta.dirname, "../../..");
export const CACHE_DIR = join(REPO_ROOT, ".cache");
export const NPM_CACHE = join(CACHE_DIR, "npm");
const FRONTEND_PREFIX = "frontend/";
/** Folders and files the build owns inside the app folder; never deleted by the sync. */
const KEEP = new Set(["node_modules", ".next", "package-lock.json", "next-env.d.ts", "tsconfig.tsbuildinfo", ".charter-build"]);

/**
 * @typedef {{ path: string, content: string }} GeneratedFile
 * @typedef {{ route: string, files: string[], bytes: number, gzipBytes: number }} RouteSize
 */

function sha(text) {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return /** @type {{ code?: string }} */ (e).code === "EPERM";
  }
}

/**
 * Serialises work on one folder across processes (vitest workers, a parallel bench run). The lock
 * file holds the owner's pid, so a lock left by a killed run is taken over at once.
 */
export function withLock(lockPath, fn) {
  mkdirSync(dirname(lockPath), { recursive: true });
  const deadline = Date.now() + 30 * 60_000;
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx");
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch {
      try {
        const owner = Number(readFileSync(lockPath, "utf8"));
        const stale = owner > 0 ? !alive(owner) : Date.now() - statSync(lockPath).mtimeMs > 60_000;
        if (stale) rmSync(lockPath, { force: true });
      } catch {
        // Released meanwhile.
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockPath}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

function listFiles(root, rel = "") {
  /** @type {string[]} */
  const out = [];
  for (const name of readdirSync(join(root, rel)).sort()) {
    if (rel === "" && KEEP.has(name)) continue;
    const childRel = rel ? `${rel}/${name}` : name;
    if (statSync(join(root, childRel)).isDirectory()) out.push(...listFiles(root, childRel));
    else out.push(childRel);
  }
  return out;
}

/**
 * Writes the generated frontend into its cached app folder and installs its dependencies once.
 * `slot` keeps users apart (the browser tests serve their build while a benchmark might rebuild).
 * @param {GeneratedFile[]} files output of the nextjs generator (paths start with `frontend/`)
 * @param {{ log?: (line: string) => void, slot?: string }} [options]
 * @returns {{ appDir: string, depsHash: string }}
 */
export function prepareNextApp(files, options = {}) {
  const log = options.log ?? (() => {});
  const pkg = files.find((f) => f.path === `${FRONTEND_PREFIX}package.json`);
  if (!pkg) throw new Error("the generated files hold no frontend/package.json");
  const depsHash = sha(pkg.content);
  const appDir = join(CACHE_DIR, "nextjs", `${options.slot ?? "app"}-${depsHash}`);
  withLock(`${appDir}.lock`, () => {
    mkdirSync(appDir, { recursive: true });
    const wanted = new Map(
      files.filter((f) => f.path.startsWith(FRONTEND_PREFIX)).map((f) => [f.path.slice(FRONTEND_PREFIX.length), f.content]),
    );
    for (const rel of listFiles(appDir)) {
      if (!wanted.has(rel)) rmSync(join(appDir, rel), { force: true });
    }
    for (const [rel, content] of wanted) {
      const p = join(appDir, rel);
      if (existsSync(p) && readFileSync(p, "utf8") === content) continue;
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content);
    }
    const stamp = join(appDir, "node_modules", ".charter-installed");
    if (!existsSync(stamp)) {
      log(`installing the frontend's dependencies into ${relative(REPO_ROOT, appDir)}`);
      execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
        cwd: appDir,
        env: { ...process.env, npm_config_cache: NPM_CACHE, NEXT_TELEMETRY_DISABLED: "1" },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 15 * 60_000,
      });
      writeFileSync(stamp, pkg.content);
    }
  });
  return { appDir, depsHash };
}

/**
 * Runs `next build` (skipped when the sources and the API address are those of the last build).
 * @param {string} appDir
 * @param {{ apiUrl: string, log?: (line: string) => void }} options
 * @returns {{ output: string, built: boolean, ms: number }}
 */
export function buildNextApp(appDir, options) {
  const log = options.log ?? (() => {});
  return withLock(`${appDir}.lock`, () => {
    const sources = listFiles(appDir)
      .map((rel) => `${rel}\n${readFileSync(join(appDir, rel), "utf8")}`)
      .join("\n");
    const key = sha(`${options.apiUrl}\n${sources}`);
    const stampPath = join(appDir, ".charter-build");
    const standalone = join(appDir, ".next", "standalone", "server.js");
    if (existsSync(stampPath) && existsSync(standalone)) {
      const stamp = JSON.parse(readFileSync(stampPath, "utf8"));
      if (stamp.key === key) return { output: stamp.output, built: false, ms: 0 };
    }
    log(`next build in ${relative(REPO_ROOT, appDir)} (NEXT_PUBLIC_API_URL=${options.apiUrl})`);
    const t0 = Date.now();
    let output;
    try {
      output = execFileSync(join(appDir, "node_modules", ".bin", "next"), ["build"], {
        cwd: appDir,
        env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NEXT_PUBLIC_API_URL: options.apiUrl, NODE_ENV: "production" },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 20 * 60_000,
      });
    } catch (e) {
      const err = /** @type {{ stdout?: string, stderr?: string }} */ (e);
      throw new Error(`next build failed:\n${err.stdout ?? ""}\n${err.stderr ?? ""}`);
    }
    // The standalone server serves static assets only from its own .next/static (as the Dockerfile copies them).
    cpSync(join(appDir, ".next", "static"), join(appDir, ".next", "standalone", ".next", "static"), { recursive: true });
    writeFileSync(stampPath, JSON.stringify({ key, output }));
    return { output, built: true, ms: Date.now() - t0 };
  });
}

/**
 * Starts the standalone server of a built app. `env` adds variables (API_URL points the server at
 * another backend than the one it was built for).
 * @param {string} appDir
 * @param {number} port
 * @param {Record<string, string>} [env]
 * @returns {Promise<{ url: string, stop: () => Promise<void>, logs: () => string }>}
 */
export async function startNextApp(appDir, port, env = {}) {
  let logs = "";
  // As the Dockerfile runs it: client-address.cjs first, so the API sees each browser's address.
  const preload = join(appDir, "client-address.cjs");
  const args = [...(existsSync(preload) ? ["--require", preload] : []), join(appDir, ".next", "standalone", "server.js")];
  const child = spawn(process.execPath, args, {
    cwd: join(appDir, ".next", "standalone"),
    env: { ...process.env, PORT: String(port), HOSTNAME: "127.0.0.1", NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => {
    logs += String(d);
  });
  child.stderr.on("data", (d) => {
    logs += String(d);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Next.js server exited (${child.exitCode}):\n${logs}`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.status < 500) break;
    } catch {
      // Not up yet.
    }
    if (Date.now() > deadline) throw new Error(`the Next.js server did not answer on ${url}:\n${logs}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    logs: () => logs,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once("exit", () => done());
        child.kill("SIGTERM");
      }),
  };
}

/**
 * First Load JS per route, the figure `next build` printed up to Next 15: the gzip size of every
 * script a first visit of the route loads. Next 16 no longer prints it, so it is read from the
 * build manifests: the root main files (framework, runtime) plus the entry chunks of the route's
 * layouts and page from its client reference manifest. Polyfills (nomodule) are left out, as
 * Next did.
 * @param {string} appDir
 * @returns {RouteSize[]}
 */
export function firstLoadJs(appDir) {
  const next = join(appDir, ".next");
  const buildManifest = JSON.parse(readFileSync(join(next, "build-manifest.json"), "utf8"));
  const routes = JSON.parse(readFileSync(join(next, "app-path-routes-manifest.json"), "utf8"));
  /** @type {Map<string, { bytes: number, gzip: number }>} */
  const sizes = new Map();
  const sizeOf = (file) => {
    let s = sizes.get(file);
    if (!s) {
      const buf = readFileSync(join(next, file));
      s = { bytes: buf.length, gzip: gzipSync(buf, { level: 9 }).length };
      sizes.set(file, s);
    }
    return s;
  };
  /** @type {RouteSize[]} */
  const out = [];
  for (const [entry, route] of Object.entries(routes).sort(([, a], [, b]) => (a < b ? -1 : 1))) {
    if (route.startsWith("/_")) continue;
    // Route handlers (/api/backend, /session, the icon) serve no page and load no script.
    if (entry.endsWith("/route")) continue;
    const manifestFile = join(next, "server", "app", `${entry}_client-reference-manifest.js`);
    // Route handlers (the icon) load no script.
    if (!existsSync(manifestFile)) continue;
    // The manifest is a script that assigns globalThis.__RSC_MANIFEST[entry]; run it in a sandbox.
    const sandbox = {};
    runInNewContext(readFileSync(manifestFile, "utf8"), sandbox);
    const manifest = sandbox.__RSC_MANIFEST[entry];
    const files = new Set(buildManifest.rootMainFiles);
    for (const list of Object.values(manifest.entryJSFiles ?? {})) for (const f of list) files.add(f);
    let bytes = 0;
    let gzipBytes = 0;
    for (const f of files) {
      const s = sizeOf(f);
      bytes += s.bytes;
      gzipBytes += s.gzip;
    }
    out.push({ route, files: [...files].sort(), bytes, gzipBytes });
  }
  return out;
}

/**
 * The part every route shares: Next's and React's runtime (the build manifest's root main files).
 * @param {string} appDir
 */
export function frameworkJs(appDir) {
  const next = join(appDir, ".next");
  const buildManifest = JSON.parse(readFileSync(join(next, "build-manifest.json"), "utf8"));
  let gzipBytes = 0;
  for (const f of buildManifest.rootMainFiles) gzipBytes += gzipSync(readFileSync(join(next, f)), { level: 9 }).length;
  return gzipBytes;
}

/** @param {RouteSize[]} sizes */
export function formatSizes(sizes) {
  const width = Math.max(5, ...sizes.map((s) => s.route.length));
  const lines = [`${"Route".padEnd(width)}  First Load JS (gzip)  raw`];
  for (const s of sizes) {
    lines.push(`${s.route.padEnd(width)}  ${`${(s.gzipBytes / 1000).toFixed(1)} kB`.padStart(20)}  ${(s.bytes / 1000).toFixed(1)} kB`);
  }
  return lines.join("\n");
}
