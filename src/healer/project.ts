import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/**
 * Where a path given to `charter dev`, `healer serve|fix`, the docker or the k8s Healer puts the
 * project. Every command derives these the same way from its PATH:
 *
 * - a project root (it has `domains/`): root = PATH, domains directory = PATH/domains;
 * - `domains/` itself: root = its parent;
 * - a domain folder inside `domains/` (`domains/shop`): root = the parent of `domains/`, the
 *   domains directory that `domains/`; only this domain is scanned;
 * - a domain folder on its own (`examples/helpdesk`: contracts, no `domains/` around it): the
 *   domains directory is the folder itself, so the Healer writes only inside it, and the root is
 *   its parent, so `.forge/` and `runtime/` sit beside the contracts, never inside them;
 * - a folder with neither contracts nor `domains/` (a new project): root = PATH.
 */
export interface ProjectPaths {
  root: string;
  /** The only directory the Healer writes contracts in. */
  domainsDir: string;
  /** What the command validates and watches: the domains directory or the one domain given. */
  scanDir: string;
  /** The Healer's state (`.forge/`, git-ignored). */
  forgeDir: string;
  kind: "root" | "domains" | "domain-in-project" | "domain";
}

export function projectFromPath(path: string): ProjectPaths {
  const abs = resolve(path);
  const make = (root: string, domainsDir: string, scanDir: string, kind: ProjectPaths["kind"]): ProjectPaths => ({
    root,
    domainsDir,
    scanDir,
    forgeDir: join(root, ".forge"),
    kind,
  });
  if (isDir(join(abs, "domains"))) return make(abs, join(abs, "domains"), join(abs, "domains"), "root");
  if (basename(abs) === "domains") return make(dirname(abs), abs, abs, "domains");
  if (basename(dirname(abs)) === "domains") return make(dirname(dirname(abs)), dirname(abs), abs, "domain-in-project");
  if (hasContracts(abs)) return make(dirname(abs), abs, abs, "domain");
  return make(abs, join(abs, "domains"), join(abs, "domains"), "root");
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Whether a contract file lies in `dir` or below it (hidden folders and node_modules skipped). */
function hasContracts(dir: string, depth = 0): boolean {
  if (depth > 6 || !existsSync(dir)) return false;
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const e of entries) {
    if (e.isFile() && e.name.endsWith(".contract.yaml")) return true;
  }
  for (const e of entries) {
    if (e.isDirectory() && !e.name.startsWith(".") && e.name !== "node_modules" && hasContracts(join(dir, e.name), depth + 1)) return true;
  }
  return false;
}

/**
 * The Healer and LLM settings of the project's `.env` (`SVC_HEALER_*`, `SVC_AI_*`, provider keys
 * and base URLs; the scaffold writes them there), so the CLI notifies and proposes the way the
 * project says: the `.env` settings under the process environment, where a variable set in the
 * environment wins and an empty one does not hide the file's value.
 */
export function projectEnv(root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...projectEnvFile(join(root, ".env")) };
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && (v !== "" || !(k in env))) env[k] = v;
  return env;
}

function projectEnvFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m =
      /^\s*(?:export\s+)?(SVC_HEALER_[A-Z0-9_]*|HEALER_DATABASE_URL|SVC_AI_[A-Z0-9_]*|[A-Z]+_API_KEY|OPENAI_BASE_URL|OLLAMA_BASE_URL|LMSTUDIO_BASE_URL)\s*=\s*(.*?)\s*$/.exec(
        line,
      );
    if (!m) continue;
    const raw = m[2] as string;
    const value = /^(["']).*\1$/.test(raw) ? raw.slice(1, -1) : raw.replace(/\s+#.*$/, "");
    if (value !== "") out[m[1] as string] = value;
  }
  return out;
}
