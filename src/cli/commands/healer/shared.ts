import { existsSync, statSync } from "node:fs";
import { Option } from "commander";
// Only the light modules load with the command line; the pipeline (SQLite, generators) loads when a
// healer command runs, so `charter forge ...` and `--help` stay quick.
import { HealerError } from "../../../healer/errors.js";
import type { Healer } from "../../../healer/index.js";
import { type ProjectPaths, projectEnv, projectFromPath } from "../../../healer/project.js";
import { UserError } from "../../output.js";

/** What every `charter healer` subcommand shares: the project it works on and how it answers. */
export interface ProjectOpts {
  project?: string | undefined;
  /** The PATH argument of `fix` and `serve`: a project root, `domains/` or one domain folder. */
  path?: string | undefined;
  /** `serve --no-regenerate`: leave runtime/ alone (`charter dev` regenerates itself). */
  regenerate?: boolean;
  format?: string;
}

export function wantsJson(opts: ProjectOpts): boolean {
  return opts.format === "json";
}

export function projectOption(): Option {
  return new Option(
    "--project <dir>",
    "project root, where .forge/ and runtime/ live (default: derived from PATH, else the current directory)",
  );
}

/** The project (src/healer/project.ts): `--project` when given, else the PATH argument, else the current directory. */
function projectOf(opts: ProjectOpts): ProjectPaths {
  const given = opts.project ?? opts.path ?? ".";
  if (!existsSync(given) || !statSync(given).isDirectory()) throw new UserError(`project directory not found: ${given}`);
  return projectFromPath(given);
}

/**
 * Opens the Healer of a project. With `--format json`, notification lines go to stderr so that
 * stdout holds only the JSON document.
 */
export async function openHealer(opts: ProjectOpts, extraEnv: Record<string, string> = {}): Promise<Healer> {
  const project = projectOf(opts);
  const root = project.root;
  const json = wantsJson(opts);
  const { Healer } = await import("../../../healer/pipeline/index.js");
  try {
    return new Healer({
      projectRoot: root,
      domainsDir: project.domainsDir,
      scanDir: project.scanDir,
      ...(opts.regenerate === false ? { regenerate: () => ({ files: 0, written: 0 }) } : {}),
      env: { ...projectEnv(root), ...extraEnv },
      console: (line) => (json ? process.stderr : process.stdout).write(`${line}\n`),
    });
  } catch (e) {
    if (e instanceof HealerError) throw new UserError(e.message);
    throw e;
  }
}

/** Runs an action with the Healer open, closing it (and waiting for webhooks) whatever happens. */
export async function withHealer<T>(opts: ProjectOpts, fn: (h: Healer) => Promise<T> | T): Promise<T> {
  const healer = await openHealer(opts);
  try {
    return await fn(healer);
  } catch (e) {
    if (e instanceof HealerError) throw new UserError(e.message);
    throw e;
  } finally {
    await healer.close();
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
