import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The static Python modules under ./templates, copied verbatim into the output. They live as real
 * files so ruff can lint them where they stand. From a build (dist/) the sources are shipped
 * alongside (package.json `files`), hence the second candidate.
 */
function templatesRoot(): string {
  const here = fileURLToPath(new URL(".", import.meta.url));
  const candidates = [join(here, "templates"), join(here, "../../../src/generators/fastapi/templates")];
  for (const c of candidates) if (existsSync(join(c, "app"))) return c;
  throw new Error(`fastapi templates not found (looked in ${candidates.join(", ")})`);
}

let cache: Map<string, string> | null = null;

/** Template path (POSIX, relative to templates/) -> content, sorted by path. */
export function staticTemplates(): ReadonlyMap<string, string> {
  if (cache) return cache;
  const root = templatesRoot();
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      if (statSync(abs).isDirectory()) {
        if (name !== "__pycache__" && name !== ".ruff_cache") walk(abs);
      } else if (name.endsWith(".py")) {
        out.set(relative(root, abs).split("\\").join("/"), readFileSync(abs, "utf8"));
      }
    }
  };
  walk(root);
  cache = out;
  return out;
}
