import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The static files of the generated frontend live as real files under ./templates (the shadcn
 * registry model): they are copied verbatim, with the header added, into `frontend/`. Files under
 * templates/partials are pieces the generator assembles into IR-dependent files instead.
 */
export interface Template {
  /** Path under `frontend/`. */
  path: string;
  content: string;
}

/** Template files that only make sense when the backend has authentication. */
const AUTH_ONLY = new Set([
  "src/app/login/layout.tsx",
  "src/app/login/page.tsx",
  "src/app/logout/route.ts",
  "src/app/session/route.ts",
  "src/components/auth-status.tsx",
]);

/** Template files only a domain with agents uses (the detail page's agent runs). */
const AGENTS_ONLY = new Set(["src/components/agent-runs.tsx", "src/components/agent-runs-panel.tsx", "src/hooks/use-async.ts"]);

/** npm drops dotfiles such as .gitignore from published packages, so templates store them with `_`. */
const RENAMED: Record<string, string> = { _dockerignore: ".dockerignore", _gitignore: ".gitignore" };

function templatesDir(): string {
  // From source (tsx, vitest) the folder sits beside this module; from dist/ it is read from the
  // published src/generators/nextjs/templates (package.json "files").
  const candidates = [
    fileURLToPath(new URL("./templates/", import.meta.url)),
    fileURLToPath(new URL("../../../src/generators/nextjs/templates/", import.meta.url)),
  ];
  for (const c of candidates) if (existsSync(join(c, "src"))) return c;
  throw new Error(`nextjs templates not found (looked in ${candidates.join(", ")})`);
}

let cache: { files: Template[]; partials: Map<string, string> } | null = null;

/** Reads the template tree once per process; the files are package content, not user input. */
function load(): { files: Template[]; partials: Map<string, string> } {
  if (cache) return cache;
  const root = templatesDir();
  const files: Template[] = [];
  const partials = new Map<string, string>();
  const walk = (abs: string, rel: string): void => {
    for (const name of readdirSync(abs).sort()) {
      const childAbs = join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      if (statSync(childAbs).isDirectory()) {
        walk(childAbs, childRel);
        continue;
      }
      const content = readFileSync(childAbs, "utf8").replace(/\r\n/g, "\n");
      if (childRel.startsWith("partials/")) partials.set(childRel.slice("partials/".length), content);
      else files.push({ path: RENAMED[childRel] ?? childRel, content });
    }
  };
  walk(root, "");
  cache = { files, partials };
  return cache;
}

export function staticTemplates(withAuth: boolean, withAgents = false): Template[] {
  return load().files.filter((t) => (withAuth || !AUTH_ONLY.has(t.path)) && (withAgents || !AGENTS_ONLY.has(t.path)));
}

export function partial(name: string): string {
  const p = load().partials.get(name);
  if (p === undefined) throw new Error(`nextjs template partial ${name} is missing`);
  return p;
}

let exported: Set<string> | null = null;

/**
 * Every name the static frontend files export (`RecordForm`, `ListResult`, `DetailView`...), read
 * from the templates themselves so a new export is covered without a list to keep in step. The
 * icons are left out: no file that imports an entity's types imports an icon.
 */
export function templateExports(): ReadonlySet<string> {
  if (exported) return exported;
  const names = new Set<string>();
  const { files, partials } = load();
  const sources = [...files, ...[...partials].map(([path, content]) => ({ path, content }))];
  for (const t of sources) {
    if (!/\.tsx?$/.test(t.path) || t.path === "src/components/icons.tsx") continue;
    for (const m of t.content.matchAll(/^export (?:async )?(?:function|const|let|interface|type|class|enum) ([A-Za-z_$][\w$]*)/gm)) {
      names.add(m[1] as string);
    }
    for (const m of t.content.matchAll(/^export (?:type )?\{([^}]*)\}/gm)) {
      for (const part of (m[1] as string).split(",")) {
        const name = part
          .trim()
          .split(/\s+as\s+/)
          .pop()
          ?.replace(/^type\s+/, "");
        if (name) names.add(name);
      }
    }
  }
  exported = names;
  return names;
}
