import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Log } from "./log.js";

export interface ChildSpec {
  /** Log prefix, e.g. `backend`. */
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Keep a pipe to the child's stdin open (for `Child.send`). */
  stdin?: boolean;
}

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** Resolves with the exit code (or the signal's name) when the process group leader exits. */
  readonly exited: Promise<number | string>;
  running(): boolean;
  /** Writes a line to the child's stdin (only with `stdin: true`). */
  send(line: string): void;
  /** Calls `listener` with each line the child prints; returns the unsubscribe function. */
  onLine(listener: (line: string) => void): () => void;
}

/** Lines a child prints with this prefix talk to the supervisor and stay out of the log. */
export const CONTROL_PREFIX = "charter-dev:";

/**
 * Every child runs under this shell, the leader of its process group. fd 3 is a pipe whose other
 * end only `charter dev` holds: when `charter dev` dies in any way (kill -9 included, which no
 * handler sees), the read returns and the lifeline ends the whole group, so nothing is orphaned
 * and no port stays held. A TERM from the supervisor reaches the whole group; the leader then waits
 * for the command, so `exited` still means the command is gone, with its exit status.
 */
const LEADER = `
lifeline() { trap '' TERM INT; read -r _ <&3; kill -TERM 0; sleep 5; kill -KILL 0; }
lifeline </dev/null &
watch=$!
# A background command's stdin is /dev/null unless redirected, and redirecting <&0 is too late.
exec 4<&0
"$@" <&4 3<&- 4<&- &
pid=$!
trap 'wait $pid; s=$?; kill -KILL $watch 2>/dev/null; exit $s' TERM INT
wait $pid
s=$?
kill -KILL $watch 2>/dev/null
exit $s
`;

/**
 * Owns the child processes of `charter dev`. Each child starts in its own process group, so a stop
 * reaches everything it started (uvicorn's reloader or workers, npm's node); its output is merged
 * into the one log, line by line, under its name. What the supervisor starts, it also ends.
 */
export class Supervisor {
  private readonly children = new Set<Child>();
  /** Set by stopAll: a restart racing with the stop must not leave a process behind. */
  private closed = false;

  constructor(private readonly log: Log) {}

  start(spec: ChildSpec): Child {
    if (this.closed) throw new StoppingError();
    const proc: ChildProcess = spawn("/bin/sh", ["-c", LEADER, "charter-dev-child", spec.command, ...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      stdio: [spec.stdin ? "pipe" : "ignore", "pipe", "pipe", "pipe"],
      detached: true,
    });
    if (proc.pid === undefined) throw new Error(`could not start ${spec.name} (${spec.command})`);
    const listeners = new Set<(line: string) => void>();
    for (const stream of [proc.stdout, proc.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on("line", (line) => {
        if (!line.startsWith(CONTROL_PREFIX)) this.log.child(spec.name, line);
        for (const listener of listeners) listener(line);
      });
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
    const child: Child = {
      name: spec.name,
      pid: proc.pid,
      exited,
      running: () => !done,
      send: (line) => {
        proc.stdin?.write(`${line}\n`);
      },
      onLine: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    this.children.add(child);
    return child;
  }

  /** Stops one child's process group: SIGTERM, then SIGKILL after `graceMs`; waits for the exit. */
  async stop(child: Child, graceMs = 5000): Promise<void> {
    if (!this.children.delete(child)) return;
    signalGroup(child.pid, "SIGTERM");
    if (child.running()) {
      const timer = setTimeout(() => signalGroup(child.pid, "SIGKILL"), graceMs);
      await child.exited;
      clearTimeout(timer);
    }
    // The leader is gone; anything left in its group (a worker that ignored SIGTERM) goes now,
    // and stop() returns once the group is empty, so "stopped" means no process is left.
    signalGroup(child.pid, "SIGKILL");
    for (let i = 0; i < 100 && groupExists(child.pid); i++) await new Promise((r) => setTimeout(r, 20));
  }

  /** SIGKILL to every child's process group, without waiting (the user insisted). */
  killAll(): void {
    this.closed = true;
    for (const child of this.children) signalGroup(child.pid, "SIGKILL");
  }

  /** Whether stopAll has begun: exits from then on are expected. */
  get stopping(): boolean {
    return this.closed;
  }

  async stopAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.children].map((child) => this.stop(child)));
  }
}

/** Thrown by start() once the supervisor is stopping. */
export class StoppingError extends Error {
  constructor() {
    super("charter dev is stopping");
  }
}

/**
 * Whether a live (not zombie) process is left in the group. On Linux /proc tells; a zombie whose
 * new parent never reaps it (some container init processes) is no process left behind.
 */
function groupExists(pgid: number): boolean {
  if (!existsSync("/proc/self/stat")) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // After the command name in parentheses: state, ppid, pgrp, ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z") return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
