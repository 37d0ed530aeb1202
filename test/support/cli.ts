import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const REPO_ROOT = resolve(import.meta.dirname, "../..");
/** tsx's loader by absolute URL, so the CLI runs from any working directory (a temp project). */
export const TSX_LOADER = pathToFileURL(resolve(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs a CLI entry (`charter` or `charter-init`) from source in a child process. */
export function runCli(
  bin: "charter" | "charter-init",
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): CliResult {
  const r = spawnSync(process.execPath, ["--import", TSX_LOADER, resolve(REPO_ROOT, `src/cli/${bin}.ts`), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export const runCharter = (args: readonly string[], options?: { cwd?: string; env?: Record<string, string> }): CliResult =>
  runCli("charter", args, options);
