import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The `templates/` folder of a generator: beside its module when run from source (tsx, vitest), or
 * the published `src/generators/<target>/templates` when run from dist/ (package.json `files`).
 * `marker` is a file that must exist in it.
 */
export function templatesDir(moduleUrl: string, target: string, marker: string): string {
  const candidates = [
    fileURLToPath(new URL("./templates/", moduleUrl)),
    fileURLToPath(new URL(`../../../src/generators/${target}/templates/`, moduleUrl)),
  ];
  for (const c of candidates) if (existsSync(join(c, marker))) return c;
  throw new Error(`${target} templates not found (looked in ${candidates.join(", ")})`);
}

/** The Charter version (package.json), e.g. for an image that installs the generating Charter. */
export function charterVersion(): string {
  const pkg = fileURLToPath(new URL("../../package.json", import.meta.url));
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}
