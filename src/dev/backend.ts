import type { Log } from "./log.js";
import { waitForHttp } from "./ports.js";
import { type Child, CONTROL_PREFIX, type Supervisor } from "./supervisor.js";

/**
 * Started with `python -c`: imports the backend's third-party packages (most of its start-up time)
 * and waits. `load` then imports the generated app as it is on disk at that moment and reports
 * back; `serve HOST PORT` binds and serves it. Anything else (or stdin closing) ends it. So the
 * next backend is loaded while the current one still serves, and an app that fails to import
 * never replaces it.
 */
const WARM_START = `
import importlib
import sys

for name in ("fastapi", "pydantic", "pydantic_settings", "starlette.applications", "uvicorn", "asyncpg", "orjson", "httpx", "jwt", "email_validator"):
    try:
        importlib.import_module(name)
    except ImportError:
        pass
if sys.stdin.readline().strip() != "load":
    sys.exit(0)
import app.main

print("${CONTROL_PREFIX} loaded", flush=True)
command = sys.stdin.readline().split()
if len(command) != 3 or command[0] != "serve":
    sys.exit(0)
import uvicorn

# The idle keep-alive of the image's command (its Dockerfile): longer than the clients' pools keep one.
# No proxy headers, as in the image: uvicorn's own would believe X-Forwarded-For from any loopback
# caller; the app takes the client from TRUSTED_PROXIES' hops only (app/auth/clients.py).
uvicorn.run(app.main.app, host=command[1], port=int(command[2]), timeout_keep_alive=75, proxy_headers=False)
`;

const START_TIMEOUT_MS = 60_000;

export interface BackendOptions {
  python: string;
  /** The generated backend folder (runtime/backend). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  host: string;
  port: number;
}

/**
 * The generated backend under `charter dev`. A spare Python process with the packages already
 * imported waits beside the running one, so a restart after a contract change costs the stop of
 * the old process plus the import of the generated app, not a whole interpreter start.
 */
export class BackendRunner {
  private current: Child | null = null;
  private spare: Child | null = null;
  /** Processes stopped on purpose; any other exit is reported. */
  private readonly retired = new Set<Child>();

  constructor(
    private readonly supervisor: Supervisor,
    private readonly log: Log,
    private readonly o: BackendOptions,
  ) {}

  get url(): string {
    return `http://${this.o.host}:${this.o.port}`;
  }

  /**
   * Loads the generated app in the spare (or a new) process while the current backend serves, then
   * swaps them and waits until /health answers. An app that fails to load leaves the current
   * backend serving and returns false.
   */
  async restart(): Promise<boolean> {
    const next = this.spare?.running() ? this.spare : this.spawn();
    this.spare = null;
    if (!(await this.load(next))) {
      await this.retire(next);
      this.spare = this.spawn();
      return false;
    }
    if (this.current) await this.retire(this.current);
    this.current = next;
    next.send(`serve ${this.o.host} ${this.o.port}`);
    const ok = await waitForHttp(`${this.url}/health`, () => next.running(), START_TIMEOUT_MS);
    if (ok) this.spare = this.spawn();
    return ok;
  }

  private load(child: Child): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), START_TIMEOUT_MS);
      const off = child.onLine((line) => {
        if (line === `${CONTROL_PREFIX} loaded`) done(true);
      });
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        off();
        resolve(ok);
      };
      void child.exited.then(() => done(false));
      child.send("load");
    });
  }

  /** Drops the spare (its imported packages are stale after a requirements change). */
  async discardSpare(): Promise<void> {
    if (this.spare) await this.retire(this.spare);
    this.spare = null;
  }

  private spawn(): Child {
    const child = this.supervisor.start({
      name: "backend",
      command: this.o.python,
      args: ["-c", WARM_START],
      cwd: this.o.cwd,
      env: this.o.env,
      stdin: true,
    });
    void child.exited.then((code) => {
      if (!this.retired.has(child) && child === this.current && !this.supervisor.stopping) this.log.error(`backend exited (${code})`);
    });
    return child;
  }

  private async retire(child: Child): Promise<void> {
    this.retired.add(child);
    await this.supervisor.stop(child);
  }
}
