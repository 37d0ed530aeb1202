import { randomBytes } from "node:crypto";
import { existsSync, type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import { join, resolve } from "node:path";
import { checkDomain, type DomainIR } from "../compiler/index.js";
import type { Finding } from "../contracts/index.js";
import { generateTarget, writeFiles } from "../generators/index.js";
import { BackendRunner } from "./backend.js";
import { ensureFrontendBuild, ensurePythonEnv, stopSteps } from "./install.js";
import type { Log } from "./log.js";
import { ensurePortFree, waitForHttp } from "./ports.js";
import { type Child, StoppingError, Supervisor } from "./supervisor.js";

/** How to start the Healer service (`charter healer serve`). */
export interface HealerLauncher {
  command: string;
  /** Arguments before `--host`, e.g. `[charter.js, "healer", "serve"]`. */
  args: string[];
}

export interface DevOptions {
  /** Contract folder to serve and watch. */
  contracts: string;
  /** Output root of the generated code (`runtime/`). */
  output: string;
  /** Where the Healer keeps `.forge/` (the project root). */
  projectRoot: string;
  host: string;
  port: number;
  healerPort: number;
  frontendPort: number;
  /** Start the frontend when the domain has pages (false: `--no-frontend`). */
  frontend: boolean;
  healer: HealerLauncher;
  venvDir: string;
  /** Where the frontend's node_modules and production build are kept between runs. */
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  log: Log;
  /** Prints findings of an invalid contract. */
  printFindings: (findings: Finding[]) => void;
}

/** A problem `charter dev` reports in one line before starting anything (invalid contracts, busy port). */
export class DevError extends Error {}

/** A stop signal arrived during start-up. */
class Interrupted extends Error {}

const START_TIMEOUT_MS = 60_000;

/**
 * `charter dev`: generate, install what is missing, start the backend, the Healer and the frontend,
 * watch the contracts and restart the backend on a valid change. Resolves after a stop signal
 * once every child is gone.
 */
export async function runDev(o: DevOptions): Promise<void> {
  const log = o.log;
  const contracts = resolve(o.contracts);
  const output = resolve(o.output);
  const first = checkDomain(contracts);
  if (!first.ir || first.findings.some((f) => f.severity === "error")) {
    o.printFindings(first.findings);
    throw new DevError(`the contracts under ${o.contracts} do not validate; fix them and run charter dev again`);
  }
  const ir = first.ir;
  // From here a stop signal ends start-up too: every wait below races it.
  // The first Ctrl-C or SIGTERM stops everything gracefully; a second one kills what is left at once.
  let signals = 0;
  let supervisorRef: Supervisor | null = null;
  const shutdown = new Promise<NodeJS.Signals>((resolveSignal) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      signals++;
      if (signals === 1) resolveSignal(signal);
      else {
        log.error("second stop signal: killing every child now");
        stopSteps();
        supervisorRef?.killAll();
      }
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  let interrupted = false;
  const step = <T>(work: Promise<T>): Promise<T> => {
    const stop = shutdown.then((): never => {
      throw new Interrupted();
    });
    // Handled here too: a step that finished first leaves this rejection with no other listener.
    stop.catch(() => {});
    return Promise.race([work, stop]);
  };
  const pages = ir.pages.length > 0 && o.frontend;
  const postgres = Boolean(o.env.DATABASE_URL);

  await ensurePortFree(o.host, o.port, "backend", "set PORT (or --port) to another port");
  await ensurePortFree(o.host, o.healerPort, "Healer", "set SVC_HEALER_PORT (or --healer-port) to another port");
  if (pages) await ensurePortFree(o.host, o.frontendPort, "frontend", "set FRONTEND_PORT (or --frontend-port) to another port");

  const backendTargets = postgres ? ["fastapi-prod", "postgres", "migrations"] : ["fastapi-prod", "postgres"];
  generate(ir, output, pages ? [...backendTargets, "nextjs"] : backendTargets);
  log.info(`generated ${ir.domain} into ${o.output}`);
  const supervisor = new Supervisor(log);
  supervisorRef = supervisor;
  const apiUrl = `http://${o.host}:${o.port}`;
  const healerUrl = `http://${o.host}:${o.healerPort}`;
  const frontendUrl = `http://${o.host}:${o.frontendPort}`;
  let stopping = false;
  // The Healer and the frontend run until the end: an exit before it is reported.
  const watchExit = (child: Child): void => {
    void child.exited.then((code) => {
      if (!stopping) log.error(`${child.name} exited (${code})`);
    });
  };

  // A secret of this run unless one is given: no placeholder warning, and tokens outlive restarts.
  const authSecret = o.env.AUTH_SECRET ?? randomBytes(32).toString("hex");
  let watcher: Closable | null = null;
  try {
    const env = await step(ensurePythonEnv(log, o.venvDir, join(output, "backend", "requirements.txt")));
    const backend = new BackendRunner(supervisor, log, {
      python: env.python,
      cwd: join(output, "backend"),
      host: o.host,
      port: o.port,
      env: {
        ...o.env,
        PYTHONUNBUFFERED: "1",
        PORT: String(o.port),
        // A development loop: the contract's bootstrap users are seeded, so one can sign in.
        APP_ENV: o.env.APP_ENV ?? "development",
        DATABASE_BACKEND: o.env.DATABASE_BACKEND ?? (postgres ? "postgres" : "memory"),
        AUTH_SECRET: authSecret,
        SVC_HEALER_URL: healerUrl,
      },
    });

    const healer = supervisor.start({
      name: "healer",
      command: o.healer.command,
      args: [...o.healer.args, "--host", o.host, "--port", String(o.healerPort), contracts],
      cwd: o.projectRoot,
      env: { ...o.env, SVC_HEALER_PORT: String(o.healerPort) },
    });
    watchExit(healer);
    if (!(await step(waitForHttp(`${healerUrl}/healer/health`, () => healer.running(), START_TIMEOUT_MS)))) {
      throw new DevError("the Healer service did not start (see its log above)");
    }
    if (!(await step(backend.restart()))) throw new DevError("the backend did not start (see its log above)");
    if (pages) {
      const build = await step(ensureFrontendBuild(log, join(output, "frontend"), o.cacheDir, apiUrl));
      if (!build.built) log.info("frontend: reusing the cached production build");
      const frontend = supervisor.start({
        name: "frontend",
        command: process.execPath,
        args: ["server.js"],
        cwd: build.serverDir,
        // API_URL: the frontend's server renders the pages with the API's data, at this run's API.
        env: {
          ...o.env,
          PORT: String(o.frontendPort),
          HOSTNAME: o.host,
          NODE_ENV: "production",
          NEXT_TELEMETRY_DISABLED: "1",
          API_URL: apiUrl,
        },
      });
      watchExit(frontend);
      if (!(await step(waitForHttp(frontendUrl, () => frontend.running(), START_TIMEOUT_MS)))) {
        throw new DevError("the frontend did not start (see its log above)");
      }
    }
    printAddresses(o, ir, { apiUrl, healerUrl, frontendUrl, pages });
    // On a contract change: validate, regenerate, restart the backend; an invalid domain changes nothing.
    const reload = async (changedAt: number): Promise<void> => {
      const r = checkDomain(contracts);
      if (!r.ir || r.findings.some((f) => f.severity === "error")) {
        o.printFindings(r.findings.filter((f) => f.severity === "error"));
        log.error("the contracts do not validate; the running backend keeps serving the last good version");
        return;
      }
      const changed = generate(r.ir, output, pages ? [...backendTargets, "nextjs"] : backendTargets);
      const backendChanged = changed.some((p) => p.startsWith("backend/"));
      if (!backendChanged) {
        log.info("contracts changed; the generated backend is the same");
        return;
      }
      log.info(`contracts changed: ${changed.length} generated files updated; restarting the backend`);
      if ((await ensurePythonEnv(log, o.venvDir, join(output, "backend", "requirements.txt"))).installed) await backend.discardSpare();
      const restartAt = Date.now();
      if (await backend.restart()) {
        const now = Date.now();
        log.info(
          `backend live again ${now - changedAt} ms after the change (validate + generate ${restartAt - changedAt} ms, restart ${now - restartAt} ms)`,
        );
      } else if (!stopping) log.error("the regenerated backend did not load (see its log above); the previous one keeps serving");
      if (changed.some((p) => p.startsWith("frontend/")))
        log.info("the frontend changed too: it is rebuilt on the next start of charter dev");
    };
    watcher = watchContracts(contracts, reload, (e) => log.error(`reloading failed: ${e instanceof Error ? e.message : String(e)}`));
    const signal = await shutdown;
    stopping = true;
    log.info(`${signal === "SIGINT" ? "Ctrl-C" : signal}: stopping`);
  } catch (e) {
    if (!(e instanceof Interrupted)) throw e;
    interrupted = true;
    log.info("stopped during start-up");
  } finally {
    stopping = true;
    watcher?.close();
    stopSteps();
    await supervisor.stopAll();
  }
  if (!interrupted) log.info("stopped");
}

/** Generates `targets` into `output`; returns the paths whose bytes changed. */
function generate(ir: DomainIR, output: string, targets: string[]): string[] {
  const changed: string[] = [];
  for (const target of targets) changed.push(...writeFiles(output, generateTarget(ir, target, output)).written);
  return changed;
}

/** Something that can be closed, such as the contracts watcher. */
interface Closable {
  close(): void;
}

/**
 * Calls `onChange` after a burst of changes to contract files settles (editors write in steps),
 * one run at a time; a change during a run triggers one more run after it. Directories are
 * watched one by one, not files: Node 20's recursive watch on Linux follows file inodes and goes
 * deaf to a file an editor replaced by renaming (sed -i, vim's backup copy).
 */
function watchContracts(root: string, onChange: (changedAt: number) => Promise<void>, onError: (e: unknown) => void): Closable {
  let timer: NodeJS.Timeout | null = null;
  let running = false;
  let again = false;
  let firstChange = 0;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    const at = firstChange;
    firstChange = 0;
    try {
      await onChange(at);
    } catch (e) {
      // A failed reload is reported, never fatal: a crash here would orphan the children.
      if (!(e instanceof StoppingError)) onError(e);
    } finally {
      running = false;
      if (again) {
        again = false;
        firstChange ||= Date.now();
        void run();
      }
    }
  };
  const watchers = new Map<string, FSWatcher>();
  const addDir = (dir: string): void => {
    if (watchers.has(dir)) return;
    try {
      watchers.set(
        dir,
        watch(dir, (_event, name) => {
          const file = name ? String(name) : "";
          if (file && !file.endsWith(".yaml") && !file.endsWith(".yml")) {
            // A new folder of contracts is watched too.
            const full = join(dir, file);
            if (existsSync(full) && statSync(full).isDirectory()) addDir(full);
            return;
          }
          firstChange ||= Date.now();
          if (timer) clearTimeout(timer);
          timer = setTimeout(() => void run(), 60);
        }),
      );
    } catch {
      return;
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory() && !entry.name.startsWith(".")) addDir(join(dir, entry.name));
    }
  };
  addDir(root);
  return {
    close: () => {
      if (timer) clearTimeout(timer);
      for (const w of watchers.values()) w.close();
    },
  };
}

function printAddresses(o: DevOptions, ir: DomainIR, a: { apiUrl: string; healerUrl: string; frontendUrl: string; pages: boolean }): void {
  const lines = [`${ir.domain} is running (Ctrl-C stops everything):`, `  API        ${a.apiUrl}   (docs: ${a.apiUrl}/docs)`];
  if (a.pages) lines.push(`  Frontend   ${a.frontendUrl}`);
  else if (ir.pages.length === 0) lines.push("  Frontend   none (the domain has no Page contracts)");
  lines.push(`  Healer     ${a.healerUrl}/healer/health`);
  lines.push(
    `  Storage    ${o.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : "memory (resets on restart; set DATABASE_URL for PostgreSQL)"}`,
  );
  const authOff = ["0", "false", "no"].includes(String(o.env.AUTH_ENABLED ?? "").toLowerCase());
  const users = ir.auth?.users.filter((u) => u.password !== null) ?? [];
  if (ir.auth && !authOff && users.length > 0) {
    lines.push(`  Log in as  ${users.map((u) => `${u.email} / ${u.password} (${u.role})`).join(", ")}`);
  }
  lines.push(`Watching ${o.contracts} for changes.`);
  for (const l of lines) o.log.info(l);
}
