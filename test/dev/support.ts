import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { VENV_DIR } from "../support/python.js";

export const CHARTER = resolve("dist/cli/charter.js");

export interface DevRun {
  proc: ChildProcess;
  output(): string;
  /** Resolves once the output matches `pattern` (checked from `from`), or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs: number, from?: number): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Starts `charter dev` as a user would, with the venv, npm cache and frontend build cache of this
 * checkout so repeated runs reuse them.
 */
export function startDev(args: string[], cwd: string, env: Record<string, string> = {}): DevRun {
  const proc = spawn(process.execPath, [CHARTER, "dev", ...args], {
    cwd,
    env: {
      ...process.env,
      NO_COLOR: "1",
      CHARTER_VENV: VENV_DIR,
      CHARTER_CACHE_DIR: resolve(".cache/dev"),
      npm_config_cache: resolve(".cache/npm"),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  return {
    proc,
    output: () => out,
    exited,
    waitFor: async (pattern, timeoutMs, from = 0) => {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(out.slice(from))) {
        if (proc.exitCode !== null) throw new Error(`charter dev exited (${proc.exitCode}) before ${pattern}:\n${out}`);
        if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** Every descendant of `pid` (children, grandchildren...), read from /proc. */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Field 4 of /proc/PID/stat is the parent pid; the command name (field 2) may hold spaces.
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(name), ppid);
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift() as number;
    for (const [child, pp] of parent) {
      if (pp === p && !out.includes(child)) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

/** Whether a process exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

export async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as unknown) : null };
}
