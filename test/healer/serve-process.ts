import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const REPO = resolve(import.meta.dirname, "../..");
const TSX = pathToFileURL(join(REPO, "node_modules/tsx/dist/loader.mjs")).href;

/** A `charter healer serve` child process on 127.0.0.1 (a port of the kernel's choosing) unless told otherwise. */
export interface HealerProcess {
  /** `http://127.0.0.1:PORT`, no trailing slash; empty when it did not start. */
  url: string;
  child: ChildProcess;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `charter healer serve PROJECT --port 0` from source and waits for the line that says where
 * it listens. With `expectFailure`, returns once the process exits instead (a refused start).
 * Used by the tests and by bench/healer.ts, so both run the real command.
 */
export async function startHealerProcess(
  project: string,
  env: Record<string, string>,
  options: { expectFailure?: boolean; quiet?: boolean; host?: string; port?: number } = {},
): Promise<HealerProcess> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      TSX,
      join(REPO, "src/cli/charter.ts"),
      "healer",
      "serve",
      project,
      "--host",
      options.host ?? "127.0.0.1",
      "--port",
      String(options.port ?? 0),
    ],
    { env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    // Under load the console channel prints a line per notification; a quiet caller keeps none.
    if (!options.quiet || out.length < 4096) out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const proc: HealerProcess = {
    url: "",
    child,
    output: () => out,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
  if (options.expectFailure) {
    await exited;
    return proc;
  }
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const m = /listening on (http:\/\/[\d.]+:\d+)\/healer[\s\S]*\n {2}auth: [^\n]*\n/.exec(out);
    if (m) {
      proc.url = m[1] as string;
      return proc;
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`charter healer serve did not start:\n${out}`);
}
