import { spawnSync } from "node:child_process";
import { createInterface } from "node:readline/promises";
import type { Log } from "./log.js";

/** What applies the destructive steps the app holds back on start (app/migrate.py). */
export const DESTRUCTIVE_COMMAND = "python -m app.migrate --allow-destructive";

/** Asks a question at the terminal and returns the answer; null when there is no terminal. */
export type Ask = (question: string) => Promise<string>;

/** A terminal prompt on stdin/stdout, or null when either is not a TTY (CI, a pipe, a service). */
export function terminalAsk(stdin: NodeJS.ReadStream, stdout: NodeJS.WriteStream): Ask | null {
  if (!stdin.isTTY || !stdout.isTTY) return null;
  return async (question) => {
    const rl = createInterface({ input: stdin, output: stdout });
    // readline takes Ctrl-C for itself while it reads: pass it on, so it still stops charter dev.
    rl.on("SIGINT", () => {
      rl.close();
      process.kill(process.pid, "SIGINT");
    });
    try {
      return await rl.question(question);
    } catch {
      return "";
    } finally {
      rl.close();
    }
  };
}

/**
 * Before the backend restarts on new migrations with destructive steps: asks (y/N) whether to
 * apply them. Yes runs `python -m app.migrate --allow-destructive` in the backend; no, or no
 * terminal to ask on, leaves them held back (the app serves without them) and prints the command.
 * Returns whether they were applied.
 */
export async function confirmDestructive(
  warnings: readonly string[],
  ask: Ask | null,
  log: Log,
  run: { python: string; cwd: string; env: NodeJS.ProcessEnv },
): Promise<boolean> {
  if (warnings.length === 0) return false;
  log.info(`the new migration has ${warnings.length} destructive step(s):`);
  for (const w of warnings) log.info(`  ${w}`);
  const answer = ask === null ? null : await ask("apply them now (their data is lost)? [y/N] ");
  if (answer === null || !/^\s*y(es)?\s*$/i.test(answer)) {
    log.info(
      `held back: the backend keeps the old columns and tables and serves without them; to apply, run \`${DESTRUCTIVE_COMMAND}\` in ${run.cwd}`,
    );
    return false;
  }
  const r = spawnSync(run.python, ["-m", "app.migrate", "--allow-destructive"], { cwd: run.cwd, env: run.env, encoding: "utf8" });
  for (const line of `${r.stdout ?? ""}${r.stderr ?? ""}`.split("\n")) if (line.trim()) log.child("backend", line);
  if (r.status !== 0) {
    log.error(`\`${DESTRUCTIVE_COMMAND}\` failed (exit ${r.status ?? r.signal}); the steps stay held back`);
    return false;
  }
  log.info("destructive steps applied");
  return true;
}
