import { createHash, randomBytes } from "node:crypto";
import { existsSync, type FSWatcher, mkdirSync, readdirSync, statSync, watch } from "node:fs";
import { join, resolve } from "node:path";
import { type CheckResult, checkDomain, type DomainIR } from "../compiler/index.js";
import type { Finding } from "../contracts/index.js";
import { generateTarget, writeFiles } from "../generators/index.js";
import { markLive } from "../healer/apply/live.js";
import { projectFromPath } from "../healer/project.js";
import { BackendRunner } from "./backend.js";
import { type Ask, confirmDestructive } from "./destructive.js";
import { ensureFrontendBuild, ensurePythonEnv, stopSteps } from "./install.js";
import type { Log } from "./log.js";
import { ensurePortFree, FrontDoor, freePort, localHop, waitForHttp } from "./ports.js";
import { type Child, StoppingError, Supervisor } from "./supervisor.js";

/** How to start the Healer service (`charter healer serve`). */
export interface HealerLauncher {
  command: string;
  /** Arguments before `--host`, e.g. `[charter.js, "healer", "serve"]`. */
  args: string[];
}

export interface DevOptions {
  /**
   * The PATH given: a project root, `domains/` or one domain folder (src/healer/project.ts);
   * the domain under it is served and watched, the Healer's `.forge/` lives at the derived root.
   */
  contracts: string;
  /** Output root of the generated code (`runtime/`). */
  output: string;
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
  /** Asks before a destructive migration is applied; null (no terminal): held back, the command printed. */
  ask?: Ask | null;
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
  const project = projectFromPath(o.contracts);
  const first = validDomain(o, project.scanDir);
  const ir = first.ir;
  // From here a stop signal ends start-up too: every wait below races it.
  let supervisorRef: Supervisor | null = null;
  const { shutdown, step } = listenForStop(log, () => supervisorRef?.killAll());
  const pages = ir.pages.length > 0 && o.frontend;
  const postgres = Boolean(o.env.DATABASE_URL);
  await ensurePortsFree(o, pages);

  const backendTargets = postgres ? ["fastapi-prod", "postgres", "migrations"] : ["fastapi-prod", "postgres"];
  const output = resolve(o.output);
  const targets = pages ? [...backendTargets, "nextjs"] : backendTargets;
  const firstOutput = generate(ir, output, targets);
  log.info(`generated ${ir.domain} into ${o.output}`);
  const supervisor = new Supervisor(log);
  supervisorRef = supervisor;
  const unguard = guardInternalErrors(log, supervisor);
  let stopping = false;
  // The memory store keeps its records across restarts (backendEnvironment): saved on shutdown, restored on start.
  mkdirSync(join(project.forgeDir, "dev"), { recursive: true });
  const run: DevRun = {
    o,
    project,
    output,
    targets,
    pages,
    postgres,
    supervisor,
    step,
    isStopping: () => stopping,
    urls: {
      apiUrl: `http://${o.host}:${o.port}`,
      healerUrl: `http://${o.host}:${o.healerPort}`,
      frontendUrl: `http://${o.host}:${o.frontendPort}`,
    },
  };
  let interrupted = false;
  let watcher: Closable | null = null;
  const opened: Opened = { frontend: null };
  try {
    const started = await startServices(run, firstOutput, opened);
    markLive(project.root, project.forgeDir, servedContracts(first), new Date().toISOString());
    const reload = contractReloader(run, started, firstOutput.backend);
    printAddresses(o, ir, { ...run.urls, pages });
    watcher = watchContracts(project.scanDir, reload, (e) => log.error(`reloading failed: ${e instanceof Error ? e.message : String(e)}`));
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
    await opened.frontend?.close();
    unguard();
  }
  if (!interrupted) log.info("stopped");
}

/** What the pieces of one `charter dev` run share once start-up has begun. */
interface DevRun {
  o: DevOptions;
  project: ReturnType<typeof projectFromPath>;
  /** The output root, absolute. */
  output: string;
  targets: string[];
  /** The frontend runs: the domain has pages and `--no-frontend` was not given. */
  pages: boolean;
  postgres: boolean;
  supervisor: Supervisor;
  /** Races a start-up wait against the first stop signal (Interrupted). */
  step: <T>(work: Promise<T>) => Promise<T>;
  isStopping: () => boolean;
  urls: { apiUrl: string; healerUrl: string; frontendUrl: string };
}

/** The running children `charter dev` restarts or refreshes on a contract change. */
interface Started {
  backend: BackendRunner;
  frontend: FrontendRunner;
  /** Asks before a destructive migration step; false when nothing is to be asked. */
  destructive: (warnings: readonly string[]) => Promise<boolean>;
}

/** The first check of the contracts: a domain that does not validate starts nothing. */
function validDomain(o: DevOptions, contracts: string): CheckResult & { ir: DomainIR } {
  const first = checkDomain(contracts);
  if (!first.ir || first.findings.some((f) => f.severity === "error")) {
    o.printFindings(first.findings);
    throw new DevError(`the contracts under ${o.contracts} do not validate; fix them and run charter dev again`);
  }
  return { ...first, ir: first.ir };
}

/**
 * The first Ctrl-C or SIGTERM stops everything gracefully (`shutdown` resolves); a second one
 * kills what is left at once. `step` races a start-up wait against the first.
 */
function listenForStop(log: Log, killAll: () => void): { shutdown: Promise<NodeJS.Signals>; step: DevRun["step"] } {
  let signals = 0;
  const shutdown = new Promise<NodeJS.Signals>((resolveSignal) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      signals++;
      if (signals === 1) resolveSignal(signal);
      else {
        log.error("second stop signal: killing every child now");
        stopSteps();
        killAll();
      }
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  const step = <T>(work: Promise<T>): Promise<T> => {
    const stop = shutdown.then((): never => {
      throw new Interrupted();
    });
    // Handled here too: a step that finished first leaves this rejection with no other listener.
    stop.catch(() => {});
    return Promise.race([work, stop]);
  };
  return { shutdown, step };
}

async function ensurePortsFree(o: DevOptions, pages: boolean): Promise<void> {
  await ensurePortFree(o.host, o.port, "backend", "set PORT (or --port) to another port");
  await ensurePortFree(o.host, o.healerPort, "Healer", "set SVC_HEALER_PORT (or --healer-port) to another port");
  if (pages) await ensurePortFree(o.host, o.frontendPort, "frontend", "set FRONTEND_PORT (or --frontend-port) to another port");
}

/** What start-up opened that the supervisor does not own, for runDev to close even after a half-way stop. */
interface Opened {
  frontend: FrontendRunner | null;
}

/** Starts the Healer, the backend and (with pages) the frontend, in that order, each waited for. */
async function startServices(run: DevRun, firstOutput: Generated, opened: Opened): Promise<Started> {
  const { o, output, step } = run;
  const env = await step(ensurePythonEnv(o.log, o.venvDir, join(output, "backend", "requirements.txt")));
  const backendEnv = backendEnvironment(run);
  const backend = new BackendRunner(run.supervisor, o.log, {
    python: env.python,
    cwd: join(output, "backend"),
    host: o.host,
    port: o.port,
    env: backendEnv,
  });
  // DATABASE_MIGRATE=auto holds destructive steps back; the person at the terminal may apply them.
  const destructive = (warnings: readonly string[]): Promise<boolean> =>
    run.postgres && backendEnv.DATABASE_MIGRATE === "auto"
      ? confirmDestructive(warnings, o.ask ?? null, o.log, { python: env.python, cwd: join(output, "backend"), env: backendEnv })
      : Promise.resolve(false);
  await startHealer(run);
  await step(destructive(firstOutput.destructive));
  if (!(await step(backend.restart()))) throw new DevError("the backend did not start (see its log above)");
  const frontend = new FrontendRunner(run.supervisor, o.log, {
    host: o.host,
    port: o.frontendPort,
    env: o.env,
    apiUrl: run.urls.apiUrl,
    outputDir: join(output, "frontend"),
    cacheDir: o.cacheDir,
    isStopping: run.isStopping,
  });
  opened.frontend = frontend;
  if (run.pages) {
    const build = await step(ensureFrontendBuild(o.log, join(output, "frontend"), o.cacheDir, run.urls.apiUrl));
    if (!build.built) o.log.info("frontend: reusing the cached production build");
    if (!(await step(frontend.open(build.serverDir, firstOutput.frontend)))) {
      throw new DevError("the frontend did not start (see its log above)");
    }
  }
  return { backend, frontend, destructive };
}

/** The environment of the generated backend in a development loop. */
function backendEnvironment(run: DevRun): NodeJS.ProcessEnv {
  const { o, postgres } = run;
  // The memory store keeps its records across restarts: saved on shutdown, restored on start.
  const snapshot = join(run.project.forgeDir, "dev", "memory.snapshot");
  return {
    ...o.env,
    PYTHONUNBUFFERED: "1",
    PORT: String(o.port),
    // A development loop: the contract's bootstrap users are seeded, so one can sign in.
    APP_ENV: o.env.APP_ENV ?? "development",
    // Log lines for a person at the terminal rather than for a collector.
    LOG_FORMAT: o.env.LOG_FORMAT ?? "text",
    DATABASE_BACKEND: o.env.DATABASE_BACKEND ?? (postgres ? "postgres" : "memory"),
    // A development database follows the contracts: their migrations apply on every restart.
    DATABASE_MIGRATE: o.env.DATABASE_MIGRATE ?? "auto",
    // A secret of this run unless one is given: no placeholder warning, and tokens outlive restarts.
    AUTH_SECRET: o.env.AUTH_SECRET ?? randomBytes(32).toString("hex"),
    SVC_HEALER_URL: run.urls.healerUrl,
    // The one hop whose X-Forwarded-For names the client: the frontend's server, on this machine
    // (it sends what the front door wrote). Without a frontend, nobody's.
    TRUSTED_PROXIES: run.pages ? localHop(o.host) : "",
    ...(postgres ? {} : { MEMORY_SNAPSHOT: snapshot }),
  };
}

/**
 * The Healer only rewrites contracts (--no-regenerate): the watcher regenerates and restarts, so
 * both kinds of fix (its own and the user's) take the one path to the running app. It runs until
 * the end: an exit before it is reported.
 */
async function startHealer(run: DevRun): Promise<void> {
  const { o } = run;
  const healer = run.supervisor.start({
    name: "healer",
    command: o.healer.command,
    args: [...o.healer.args, "--no-regenerate", "--host", o.host, "--port", String(o.healerPort), resolve(o.contracts)],
    cwd: run.project.root,
    // A development Healer, like the development app, tolerates a short token.
    env: { APP_ENV: "development", ...o.env, SVC_HEALER_PORT: String(o.healerPort) },
  });
  void healer.exited.then((code) => {
    if (!run.isStopping()) o.log.error(`${healer.name} exited (${code})`);
  });
  if (!(await run.step(waitForHttp(`${run.urls.healerUrl}/healer/health`, () => healer.running(), START_TIMEOUT_MS)))) {
    throw new DevError("the Healer service did not start (see its log above)");
  }
}

/**
 * On a contract change: validate, regenerate, restart what changed. An invalid domain changes
 * nothing running; the Healer is asked to scan it (tier 1 fixes rewrite the file, which brings us
 * back here; tiers 2 and 3 wait for approval on its page).
 */
function contractReloader(run: DevRun, started: Started, firstBackend: string): (changedAt: number) => Promise<void> {
  const { o, project } = run;
  const log = o.log;
  const scans = healerScanner(log, run.urls.healerUrl, o.env.SVC_HEALER_TOKEN);
  let runningBackend = firstBackend;
  return async (changedAt) => {
    const r = checkDomain(project.scanDir);
    if (!r.ir || r.findings.some((f) => f.severity === "error")) {
      o.printFindings(r.findings.filter((f) => f.severity === "error"));
      log.error("the contracts do not validate; the running backend keeps serving the last good version");
      scans.request();
      return;
    }
    const out = generate(r.ir, run.output, run.targets);
    // Compared with what the running backend was started from, not with the files on disk: they
    // may have been written by someone else (a Healer regenerating) and still not be running.
    if (out.backend === runningBackend) {
      log.info("contracts changed; the generated backend is the same");
      markLive(project.root, project.forgeDir, servedContracts(r), new Date().toISOString());
    } else if (await restartBackend(run, started, r, out, changedAt)) runningBackend = out.backend;
    if (run.pages) started.frontend.refresh(out.frontend);
  };
}

/** Restarts the backend on newly generated code; true once the new one serves. */
async function restartBackend(run: DevRun, started: Started, r: CheckResult, out: Generated, changedAt: number): Promise<boolean> {
  const { o, project } = run;
  const log = o.log;
  log.info(`contracts changed: ${out.changed.length} generated files updated; restarting the backend`);
  if ((await ensurePythonEnv(log, o.venvDir, join(run.output, "backend", "requirements.txt"))).installed)
    await started.backend.discardSpare();
  await started.destructive(out.destructive);
  const restartAt = Date.now();
  if (await started.backend.restart()) {
    const now = Date.now();
    log.info(
      `backend live again ${now - changedAt} ms after the change (validate + generate ${restartAt - changedAt} ms, restart ${now - restartAt} ms)`,
    );
    for (const id of markLive(project.root, project.forgeDir, servedContracts(r), new Date(now).toISOString())) {
      log.info(`healer fix ${id} is live`);
    }
    return true;
  }
  if (!run.isStopping()) log.error("the regenerated backend did not load (see its log above); the previous one keeps serving");
  return false;
}

/** What one generation produced: the paths whose bytes changed, and a hash of the backend's and the frontend's files. */
interface Generated {
  changed: string[];
  /** The destructive steps of migrations written by this generation (`path: message`). */
  destructive: string[];
  backend: string;
  frontend: string;
}

/** Generates `targets` into `output`. */
function generate(ir: DomainIR, output: string, targets: string[]): Generated {
  const changed: string[] = [];
  const destructive: string[] = [];
  const backend = createHash("sha256");
  const frontend = createHash("sha256");
  for (const target of targets) {
    const files = generateTarget(ir, target, output);
    for (const f of files) (target === "nextjs" ? frontend : backend).update(`\n${f.path}\n`).update(f.content);
    const written = writeFiles(output, files).written;
    changed.push(...written);
    for (const f of files) {
      if (!f.permanent || !written.includes(f.path)) continue;
      for (const w of f.warnings ?? []) if (w.kind === "destructive") destructive.push(`${f.path}: ${w.message}`);
    }
  }
  return { changed, destructive, backend: backend.digest("hex"), frontend: frontend.digest("hex") };
}

/** Contract file -> the text this generation was made from (what `markLive` compares fixes with). */
function servedContracts(r: CheckResult): Map<string, string> {
  return new Map(r.loaded.map((c) => [c.absPath, c.source]));
}

/**
 * An internal error of `charter dev` itself (an exception nobody caught, a rejected promise
 * nobody awaited) stops every child it started and says why, instead of leaving them running
 * without a parent. Returns the function that removes the guard.
 */
function guardInternalErrors(log: Log, supervisor: Supervisor): () => void {
  let fatal = false;
  const onError = (e: unknown): void => {
    const why = e instanceof Error ? (e.stack ?? e.message) : String(e);
    log.error(`internal error, stopping every process charter dev started: ${why}`);
    if (fatal) return;
    fatal = true;
    stopSteps();
    setTimeout(() => {
      supervisor.killAll();
      process.exit(1);
    }, 8000).unref();
    void supervisor.stopAll().finally(() => process.exit(1));
  };
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onError);
  return () => {
    process.off("uncaughtException", onError);
    process.off("unhandledRejection", onError);
  };
}

/**
 * Asks the Healer service to scan the contracts (`POST /healer/scan`) and prints each ticket and
 * its outcome. One scan at a time, in the background: a tier 2 or 3 proposal may wait on an LLM,
 * and the watcher must go on meanwhile. A request during a scan runs one more after it.
 */
function healerScanner(log: Log, healerUrl: string, token: string | undefined): { request(): void } {
  let running = false;
  let again = false;
  const run = async (): Promise<void> => {
    running = true;
    try {
      const res = await fetch(`${healerUrl}/healer/scan`, {
        method: "POST",
        headers: token ? { authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(180_000),
      });
      const body = (await res.json()) as { tickets?: { ticket_id: string; status: string; created: boolean }[]; message?: string };
      if (!res.ok) {
        log.error(`the Healer did not scan the contracts (${res.status}): ${body.message ?? ""}`);
        return;
      }
      for (const t of body.tickets ?? []) {
        const view = `${healerUrl}/healer/tickets/${t.ticket_id}/view`;
        const what =
          t.status === "applied"
            ? "fixed the contract; reloading"
            : t.status === "proposed"
              ? `a fix waits for your approval: ${view}`
              : t.status === "failed"
                ? `could not fix it: ${view}`
                : `${t.status}: ${view}`;
        log.info(`healer ticket ${t.ticket_id.slice(0, 8)}${t.created ? " (new)" : ""}: ${what}`);
      }
    } catch (e) {
      log.error(`the Healer did not answer the scan: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      running = false;
      if (again) {
        again = false;
        void run();
      }
    }
  };
  return {
    request: () => {
      if (running) again = true;
      else void run();
    },
  };
}

interface FrontendOptions {
  host: string;
  port: number;
  env: NodeJS.ProcessEnv;
  apiUrl: string;
  outputDir: string;
  cacheDir: string;
  isStopping: () => boolean;
}

/**
 * The frontend's production server. When a contract change alters the generated frontend, it is
 * rebuilt in the background while the current server keeps serving; the new server starts on a
 * port of its own, and once it answers the front door (the port users know) points at it and the
 * old one stops. A rebuilt server that fails to start never replaces the working one.
 */
class FrontendRunner {
  private child: Child | null = null;
  private hash = "";
  private wanted = "";
  private job: Promise<void> = Promise.resolve();
  private readonly door: FrontDoor;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly log: Log,
    private readonly o: FrontendOptions,
  ) {
    this.door = new FrontDoor(o.host);
  }

  /** Starts the first server and opens the public port in front of it. */
  async open(serverDir: string, hash: string): Promise<boolean> {
    await this.door.listen(this.o.port);
    return this.start(serverDir, hash);
  }

  close(): Promise<void> {
    return this.door.close();
  }

  private async start(serverDir: string, hash: string): Promise<boolean> {
    const port = await freePort(this.o.host);
    const clientAddress = join(this.o.outputDir, "client-address.cjs");
    const child = this.supervisor.start({
      name: "frontend",
      command: process.execPath,
      // client-address.cjs keeps the X-Forwarded-For of the front door only, the client's own never.
      args: [...(existsSync(clientAddress) ? ["--require", clientAddress] : []), "server.js"],
      cwd: serverDir,
      // API_URL: the frontend's server renders the pages with the API's data, at this run's API.
      env: {
        ...this.o.env,
        PORT: String(port),
        HOSTNAME: this.o.host,
        NODE_ENV: "production",
        NEXT_TELEMETRY_DISABLED: "1",
        API_URL: this.o.apiUrl,
        TRUSTED_PROXIES: this.door.upstreamAddress,
      },
    });
    void child.exited.then((code) => {
      if (this.child === child && !this.o.isStopping()) this.log.error(`frontend exited (${code})`);
    });
    if (!(await waitForHttp(`http://${this.o.host}:${port}`, () => child.running(), START_TIMEOUT_MS))) {
      await this.supervisor.stop(child);
      return false;
    }
    const old = this.child;
    this.child = child;
    this.hash = hash;
    this.door.point(port);
    // Requests already inside the old server finish before it goes.
    if (old) setTimeout(() => void this.supervisor.stop(old).catch(() => {}), OLD_FRONTEND_GRACE_MS);
    return true;
  }

  /** Rebuilds and swaps when `hash` (of the generated frontend) differs from the one serving. */
  refresh(hash: string): void {
    this.wanted = hash;
    this.job = this.job
      .then(async () => {
        if (this.wanted !== hash || hash === this.hash || this.o.isStopping()) return;
        this.log.info("the frontend changed: rebuilding it in the background; the current one keeps serving");
        const t0 = Date.now();
        const build = await ensureFrontendBuild(this.log, this.o.outputDir, this.o.cacheDir, this.o.apiUrl);
        if (this.o.isStopping()) return;
        if (await this.start(build.serverDir, hash)) this.log.info(`frontend live again (rebuilt in ${Date.now() - t0} ms)`);
        else if (!this.o.isStopping())
          this.log.error("the rebuilt frontend did not start (see its log above); the previous one keeps serving");
      })
      .catch((e: unknown) => {
        if (!(e instanceof StoppingError)) this.log.error(`rebuilding the frontend failed: ${e instanceof Error ? e.message : String(e)}`);
      });
  }
}

/** How long a replaced frontend server may finish the requests it already has. */
const OLD_FRONTEND_GRACE_MS = 2_000;

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
  const runs = settledRuns(onChange, onError);
  const folders = watchFolders(root, runs.trigger);
  return {
    close: () => {
      runs.cancel();
      folders.close();
    },
  };
}

/**
 * `trigger` runs `onChange` 60 ms after the last trigger of a burst, one run at a time, with the
 * time of the burst's first change. A contract that vanished mid-run (ENOENT) triggers again.
 */
function settledRuns(
  onChange: (changedAt: number) => Promise<void>,
  onError: (e: unknown) => void,
): { trigger: () => void; cancel: () => void } {
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
      if ((e as NodeJS.ErrnoException | null)?.code === "ENOENT") {
        // A contract listed a moment ago is gone: an editor deleting it to write it again, or moving
        // it away. Not a failure: read the folder again once the burst settles.
        firstChange ||= at;
        trigger();
      } else if (!(e instanceof StoppingError)) {
        // A failed reload is reported, never fatal: a crash here would orphan the children.
        onError(e);
      }
    } finally {
      running = false;
      if (again) {
        again = false;
        firstChange ||= Date.now();
        void run();
      }
    }
  };
  const trigger = (): void => {
    firstChange ||= Date.now();
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void run(), 60);
  };
  return {
    trigger,
    cancel: () => {
      if (timer) clearTimeout(timer);
    },
  };
}

/**
 * Watches `root` and every folder under it (hidden ones aside), calling `trigger` on a change to a
 * contract file or to the folders themselves. Editors create, rename and delete files in bursts
 * (sed -i's temporary file, vim's swap and backup, atomic renames): any entry may be gone by the
 * time it is looked at, so every file system call here tolerates that.
 */
function watchFolders(root: string, trigger: () => void): Closable {
  const watchers = new Map<string, FSWatcher>();
  const drop = (dir: string): void => {
    watchers.get(dir)?.close();
    watchers.delete(dir);
  };
  // A change to something other than a contract file matters only when it is a folder.
  const onOther = (dir: string, file: string): void => {
    // A new (or recreated) folder of contracts is watched too.
    const full = join(dir, file);
    if (isDirectory(full)) {
      if (!isDirectory(dir)) drop(dir);
      drop(full);
      addDir(full);
      trigger();
    } else if (watchers.has(full)) {
      drop(full);
      trigger();
    }
  };
  const addDir = (dir: string): void => {
    if (watchers.has(dir)) return;
    let w: FSWatcher;
    try {
      w = watch(dir, (_event, name) => {
        const file = name ? String(name) : "";
        if (file && !file.endsWith(".yaml") && !file.endsWith(".yml")) onOther(dir, file);
        else trigger();
      });
    } catch {
      return;
    }
    // A watched folder that was deleted reports an error: forget it; recreating it adds it again.
    w.on("error", () => drop(dir));
    watchers.set(dir, w);
    let entries: import("node:fs").Dirent[] = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      drop(dir);
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith(".")) addDir(join(dir, entry.name));
    }
  };
  addDir(root);
  return {
    close: () => {
      for (const w of watchers.values()) w.close();
    },
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function printAddresses(o: DevOptions, ir: DomainIR, a: { apiUrl: string; healerUrl: string; frontendUrl: string; pages: boolean }): void {
  const lines = [`${ir.domain} is running (Ctrl-C stops everything):`, `  API        ${a.apiUrl}   (docs: ${a.apiUrl}/docs)`];
  if (a.pages) lines.push(`  Frontend   ${a.frontendUrl}`);
  else if (ir.pages.length === 0) lines.push("  Frontend   none (the domain has no Page contracts)");
  lines.push(`  Healer     ${a.healerUrl}/healer   (tickets, proposed fixes to approve)`);
  lines.push(
    `  Storage    ${o.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : "memory (kept across restarts of charter dev in .forge/dev/; set DATABASE_URL for PostgreSQL)"}`,
  );
  const authOff = ["0", "false", "no"].includes(String(o.env.AUTH_ENABLED ?? "").toLowerCase());
  const users = ir.auth?.users.filter((u) => u.password !== null) ?? [];
  if (ir.auth && !authOff && users.length > 0) {
    lines.push(`  Log in as  ${users.map((u) => `${u.email} / ${u.password} (${u.role})`).join(", ")}`);
  }
  lines.push(`Watching ${o.contracts} for changes.`);
  for (const l of lines) o.log.info(l);
}
