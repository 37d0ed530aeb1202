import { readFileSync } from "node:fs";
import { join } from "node:path";
import { templatesDir } from "../template-dir.js";

/**
 * The Dockerfiles and .dockerignore files live as real files under ./templates so hadolint can
 * check them where they stand. npm drops dotfiles from packages, hence `_dockerignore`.
 */
const cache = new Map<string, string>();

/** A template by its path under templates/ (package content, read once per process). */
export function dockerTemplate(path: string): string {
  let text = cache.get(path);
  if (text === undefined) {
    text = readFileSync(join(templatesDir(import.meta.url, "docker", "backend/Dockerfile"), path), "utf8");
    cache.set(path, text);
  }
  return text;
}
