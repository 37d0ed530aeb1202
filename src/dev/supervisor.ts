import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Log } from "./log.js";

export interface ChildSpec {
  /** Log prefix and key, e.g. `backend`. */
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** Resolves with the exit code (or the signal's name) when the process group leader exits. */
  readonly exited: Promise<number | string>;
  running(): boolean;
}

/**
 * Owns the child processes of `charter dev`. Each child starts in its own process group, so a stop
 * reaches everything it started (uvicorn's reloader or workers, npm's node); its output is merged
 * into the one log, line by line, under its name. What the supervisor starts, it also ends.
 */
export class Supervisor {
  private readonly children = new Map<string, { proc: ChildProcess; child: Child }>();
  /** Set by stopAll: a restart racing with the stop must not leave a process behind. */
  private closed = false;

  constructor(private readonly log: Log) {}

  start(spec: ChildSpec): Child {
    if (this.closed) throw new StoppingError();
    if (this.children.get(spec.name)?.child.running()) throw new Error(`${spec.name} is already running`);
    const proc = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    if (proc.pid === undefined) throw new Error(`could not start ${spec.name} (${spec.command})`);
    for (const stream of [proc.stdout, proc.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => this.log.child(spec.name, line));
    }
    let done = false;
    const exited = new Promise<number | string>((resolve) => {
      proc.once("exit", (code, signal) => {
        done = true;
        resolve(code ?? signal ?? "unknown");
      });
      proc.once("error", (e) => {
        done = true;
        this.log.error(`${spec.name}: ${e.message}`);
        resolve(1);
      });
    });
    const child: Child = { name: spec.name, pid: proc.pid, exited, running: () => !done };
    this.children.set(spec.name, { proc, child });
    return child;
  }

  /** Stops one child's process group: SIGTERM, then SIGKILL after `graceMs`; waits for the exit. */
  async stop(name: string, graceMs = 5000): Promise<void> {
    const entry = this.children.get(name);
    if (!entry) return;
    this.children.delete(name);
    const { child } = entry;
    signalGroup(child.pid, "SIGTERM");
    if (child.running()) {
      const timer = setTimeout(() => signalGroup(child.pid, "SIGKILL"), graceMs);
      await child.exited;
      clearTimeout(timer);
    }
    // The leader is gone; anything left in its group (a worker that ignored SIGTERM) goes now.
    signalGroup(child.pid, "SIGKILL");
  }

  async stopAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.children.keys()].map((name) => this.stop(name)));
  }

  pids(): number[] {
    return [...this.children.values()].map((e) => e.child.pid);
  }
}

/** Thrown by start() once the supervisor is stopping. */
export class StoppingError extends Error {
  constructor() {
    super("charter dev is stopping");
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
