import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The Dockerfiles and .dockerignore files live as real files under ./templates so hadolint can
 * check them where they stand; from a build (dist/) they are read from the published sources
 * (package.json `files`). npm drops dotfiles from packages, hence `_dockerignore`.
 */
function templatesDir(): string {
  const candidates = [
    fileURLToPath(new URL("./templates/", import.meta.url)),
    fileURLToPath(new URL("../../../src/generators/docker/templates/", import.meta.url)),
  ];
  for (const c of candidates) if (existsSync(join(c, "backend", "Dockerfile"))) return c;
  throw new Error(`docker templates not found (looked in ${candidates.join(", ")})`);
}

const cache = new Map<string, string>();

/** A template by its path under templates/ (package content, read once per process). */
export function dockerTemplate(path: string): string {
  let text = cache.get(path);
  if (text === undefined) {
    text = readFileSync(join(templatesDir(), path), "utf8");
    cache.set(path, text);
  }
  return text;
}

/** The Charter version the healer image installs: the one that generated the stack. */
export function charterVersion(): string {
  const pkg = fileURLToPath(new URL("../../../package.json", import.meta.url));
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}
