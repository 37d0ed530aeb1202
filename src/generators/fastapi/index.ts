import type { EntityIR, RouteIR } from "../../compiler/ir.js";
import { compareText } from "../../shared/text.js";
import { hashHeader } from "../header.js";
import type { GeneratedFile, Generator, GeneratorInput } from "../types.js";
import { generateAgentRunsRoutes, generateAgentSpecs, runnableAgents } from "./agents.js";
import {
  generateBootstrap,
  generateConfig,
  generateDeps,
  generateDomain,
  generateMain,
  generatePyproject,
  generateRequirements,
  generateRoutesPackage,
  generateWorkflows,
} from "./app-modules.js";
import { customModules } from "./custom.js";
import { docsAssets } from "./docs-assets.js";
import { generateHooks } from "./hooks.js";
import { generateModels } from "./models.js";
import { pyModuleName } from "./python.js";
import { generateRouteModule } from "./routes.js";
import { staticTemplates } from "./templates.js";

/** Everything this target writes lives under backend/ of the output root. */
export const BACKEND_DIR = "backend";

function byName<T extends { name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => compareText(a.name, b.name));
}

/** Module name of a Route: its base path as a snake_case word (`/tickets` -> `tickets`). */
function routeModuleNames(routes: RouteIR[]): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<string>();
  for (const r of routes) {
    let name =
      r.basePath
        .replace(/^\/+|\/+$/g, "")
        .replace(/[^A-Za-z0-9]+/g, "_")
        .toLowerCase() || r.name;
    if (/^[0-9]/.test(name)) name = `r_${name}`;
    name = pyModuleName(name);
    if (used.has(name)) name = r.name;
    used.add(name);
    out.set(r.fqn, name);
  }
  return out;
}

/** Static modules only a domain with agents needs: the runtime, its LLM client, the dispatcher. */
const AGENT_MODULES = new Set(["app/agents.py", "app/dispatcher.py", "app/llm.py", "app/worker.py"]);

/** The `fastapi-prod` target: the FastAPI backend of the domain (see docs/architecture.md). */
export function generateFastapi({ ir }: GeneratorInput): GeneratedFile[] {
  const files: GeneratedFile[] = [];
  const add = (path: string, content: string, extra: { owned?: boolean; preformatted?: true } = {}): void => {
    files.push({
      path: `${BACKEND_DIR}/${path}`,
      content,
      ...(extra.owned ? { owned: true } : {}),
      ...(extra.preformatted && { preformatted: true }),
    });
  };
  const auth = ir.auth !== null;
  const agents = runnableAgents(ir).length > 0;
  for (const [path, content] of staticTemplates()) {
    if (!auth && path.startsWith("app/auth/")) continue;
    if (!agents && AGENT_MODULES.has(path)) continue;
    add(path, hashHeader() + content, { preformatted: true });
  }
  for (const [path, content] of docsAssets()) add(path, content);
  const entities = byName(ir.entities);
  const routes = byName(ir.routes);
  const entityOf = new Map<string, EntityIR>(entities.map((e) => [e.fqn, e]));
  const modules = routeModuleNames(routes);

  add("requirements.txt", generateRequirements());
  add("pyproject.toml", generatePyproject(ir));
  add("app/config.py", generateConfig(ir));
  add("app/domain.py", generateDomain(ir, entities));
  add("app/deps.py", generateDeps(ir));
  const workflows = byName(ir.workflows).filter((w) => w.entities.length > 0);
  add("app/workflows.py", generateWorkflows(ir, workflows));
  if (auth) add("app/auth/bootstrap.py", generateBootstrap(ir));

  add("app/models/__init__.py", `${hashHeader()}"""Request and response models, one module per entity."""\n`);
  const routeByFqn = new Map(routes.map((r) => [r.fqn, r]));
  const routeOf = (e: EntityIR): RouteIR | undefined => (e.api ? routeByFqn.get(e.api.route) : undefined);
  for (const e of entities) {
    const route = routeOf(e);
    add(
      `app/models/${pyModuleName(e.name)}.py`,
      generateModels(
        e,
        route?.endpoints.find((x) => x.operation === "create"),
        route?.endpoints.find((x) => x.operation === "update"),
      ),
    );
  }
  const routeModules: string[] = [];
  // One module per Route the compiler chose to serve an entity (entity.api).
  for (const r of routes) {
    const entity = entityOf.get(r.entity);
    const module = modules.get(r.fqn);
    if (!entity || !module || entity.api?.route !== r.fqn) continue;
    add(`app/routes/${module}.py`, generateRouteModule(ir, r, entity, module).content);
    routeModules.push(module);
  }
  if (agents) {
    add("app/agent_specs.py", generateAgentSpecs(ir));
    add("app/routes/agent_runs.py", generateAgentRunsRoutes(ir));
    routeModules.push("agent_runs");
  }
  add("app/routes/__init__.py", generateRoutesPackage([...routeModules].sort()));
  const hooked = entities.filter((e) => routes.some((r) => r.entity === e.fqn && modules.has(r.fqn)));
  add("app/hooks.py", generateHooks(hooked));
  for (const m of customModules(hooked)) add(m.path, m.content, { owned: m.owned });
  add("app/main.py", generateMain(ir));
  return files.sort((a, b) => compareText(a.path, b.path));
}

export const fastapiGenerator: Generator = {
  target: "fastapi-prod",
  description: "FastAPI backend: config, models, repositories (memory, PostgreSQL), routes, auth",
  generate: generateFastapi,
};
