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
        if (name !== "__pycache__" && name !== ".ruff_cache" && name !== "skeletons") walk(abs);
      } else if (name.endsWith(".py")) {
        out.set(relative(root, abs).split("\\").join("/"), readFileSync(abs, "utf8"));
      }
    }
  };
  walk(root);
  cache = out;
  return out;
}

/** What a skeleton's conditional blocks test (`# charter: if auth`, `# charter: if not auth`). */
export type SkeletonFlags = Readonly<Record<string, boolean>>;

export interface SkeletonInput {
  flags: SkeletonFlags;
  /** `__name__` placeholders and their replacement text. */
  values: Readonly<Record<string, string>>;
  /** Lines marked `# charter: each NAME` are repeated once per item, `__NAME__` replaced by it. */
  each?: Readonly<Record<string, readonly string[]>>;
}

/**
 * A skeleton module (templates/skeletons/, valid Python that ruff lints where it stands) rendered
 * for one domain: conditional blocks kept or dropped, repeated lines expanded, placeholders filled.
 * Runs of blank lines a dropped block leaves are brought back to two, as ruff format wants.
 */
export function renderSkeleton(path: string, input: SkeletonInput): string {
  const text = readFileSync(join(templatesRoot(), "skeletons", path), "utf8");
  const out: string[] = [];
  const stack: boolean[] = [];
  const active = (): boolean => stack.every(Boolean);
  for (const line of text.split("\n")) {
    const marker = /^\s*# charter: (if (not )?(\w+)|else|end)\s*$/.exec(line);
    if (marker) {
      if (marker[1] === "else") stack.push(!(stack.pop() ?? true));
      else if (marker[1] === "end") stack.pop();
      else {
        const flag = marker[3] ?? "";
        if (!(flag in input.flags)) throw new Error(`skeleton ${path}: unknown flag ${flag}`);
        stack.push(marker[2] ? !input.flags[flag] : input.flags[flag] === true);
      }
      continue;
    }
    if (!active()) continue;
    const each = /^(.*?)\s+# charter: each (\w+(?: \w+)*)$/.exec(line);
    if (each) {
      const key = (each[2] ?? "").replace(/ /g, "_");
      for (const item of input.each?.[key] ?? []) out.push(fill(each[1] ?? "", { ...input.values, [key]: item }));
      continue;
    }
    out.push(fill(line, input.values));
  }
  return out.join("\n").replace(/\n{4,}/g, "\n\n\n");
}

function fill(line: string, values: Readonly<Record<string, string>>): string {
  return line.replace(/__([a-z_]+?)__/g, (whole, name: string) => values[name] ?? whole);
}
