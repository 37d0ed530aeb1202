import type { AgentIR, DomainIR, EntityIR, FieldIR, RouteIR } from "../../compiler/ir.js";
import { compareText } from "../../shared/text.js";
import { hashHeader } from "../header.js";
import { updateOwnRules } from "./models.js";
import { assign, call, dict, exploded, kw, type PyExpr, str, tuple } from "./py-layout.js";
import {
  constantName,
  Imports,
  metaConstant,
  pyAsyncDef,
  pyCall,
  pyModuleName,
  pyStr,
  pyTuple,
  pyValue,
  repositoryAlias,
  usesExprModule,
} from "./python.js";
import { fillDict, invokeEvent, renderRoleConstants, rolesConstant, rulesTuple, updateFill } from "./routes.js";
import { operationStatuses } from "./statuses.js";

/**
 * The agent side of the backend (app/agents.py runs it): the Agent contracts as data
 * (app/agent_specs.py), and the read-only endpoints listing a record's runs
 * (app/routes/agent_runs.py). Only domains with agents get these modules.
 */

/** An agent that can run: its input entity exists. */
interface RunnableAgent {
  agent: AgentIR;
  entity: EntityIR;
}

export function runnableAgents(ir: DomainIR): RunnableAgent[] {
  const out: RunnableAgent[] = [];
  for (const agent of [...ir.agents].sort((a, b) => compareText(a.fqn, b.fqn))) {
    const entity = ir.entities.find((e) => e.fqn === agent.inputEntity);
    if (entity) out.push({ agent, entity });
  }
  return out;
}

/** (event, entity name, agent) triples: triggers, `ai_integration`, route `invoke`s; sorted, unique. */
export function subscriptions(ir: DomainIR): [string, string, AgentIR][] {
  const runnable = runnableAgents(ir);
  const byFqn = new Map(runnable.map((r) => [r.agent.fqn, r]));
  const out = new Map<string, [string, string, AgentIR]>();
  const add = (event: string, entity: EntityIR, fqn: string): void => {
    const r = byFqn.get(fqn);
    // An agent changes records of its input entity only: an event about another entity has none.
    if (r && r.entity.fqn === entity.fqn) out.set(`${event}\u0000${entity.name}\u0000${fqn}`, [event, entity.name, r.agent]);
  };
  for (const r of runnable) add(r.agent.trigger, r.entity, r.agent.fqn);
  for (const e of ir.entities) {
    for (const [event, fqns] of Object.entries(e.aiIntegration)) for (const fqn of fqns) add(event, e, fqn);
  }
  for (const route of ir.routes) {
    const entity = ir.entities.find((e) => e.fqn === route.entity);
    if (!entity) continue;
    for (const endpoint of route.endpoints) {
      for (const s of endpoint.sideEffects) if ("invoke" in s) add(invokeEvent(s.invoke), entity, s.invoke);
    }
  }
  return [...out.entries()].sort(([a], [b]) => compareText(a, b)).map(([, v]) => v);
}

/** What a field may hold, in words, for the prompt: `string, one of: low, medium, high`. */
function fieldHint(f: FieldIR): string {
  const parts: string[] = [f.type === "array" && f.itemsType ? `array of ${f.itemsType}` : f.type];
  if (f.enum?.length) parts.push(`one of: ${f.enum.join(", ")}`);
  const c = f.constraints;
  if (c.min !== undefined) parts.push(`at least ${c.min}`);
  if (c.max !== undefined) parts.push(`at most ${c.max}`);
  if (c.maxLength !== undefined) parts.push(`at most ${c.maxLength} characters`);
  if (f.description) parts.push(f.description);
  return parts.join("; ");
}

/** The Route the compiler chose to serve `entity` (its rules apply to an agent's change too). */
function updateRoute(ir: DomainIR, entity: EntityIR): RouteIR | undefined {
  const fqn = entity.api?.route;
  return fqn === undefined ? undefined : ir.routes.find((r) => r.fqn === fqn);
}

/** app/agent_specs.py: every agent, the update path of each entity they change, the subscriptions. */
export function generateAgentSpecs(ir: DomainIR): string {
  const imp = new Imports();
  imp.add("app.agents", "AgentSpec");
  imp.add("app.agents", "UpdatePath");
  const runnable = runnableAgents(ir);
  const entities = [...new Map(runnable.map((r) => [r.entity.fqn, r.entity])).values()].sort((a, b) => compareText(a.name, b.name));
  const { pathConstant, agentConstant } = specConstants(ir, runnable, entities);
  const paths = entities.map((e) => updatePath(ir, e, imp, pathConstant.get(e.fqn) as string));
  const specs = runnable.map(({ agent: a, entity: e }) =>
    agentSpec(a, e, agentConstant.get(a.fqn) as string, pathConstant.get(e.fqn) as string),
  );
  const subs = subscriptions(ir).map(([event, entity, agent]) =>
    tuple([pyStr(event), pyStr(entity), agentConstant.get(agent.fqn) as string]),
  );
  return [
    hashHeader(),
    `"""The Agent contracts of the ${ir.domain} domain, as data the agent runtime (app/agents.py) runs."""`,
    "",
    imp.render(),
    "",
    ...paths.flatMap((p) => [p, ""]),
    ...specs.flatMap((s) => [s, ""]),
    `AGENTS = ${pyTuple(runnable.map((r) => agentConstant.get(r.agent.fqn) as string))}`,
    "",
    "# (event, entity, agent): the agent runs for the record of every such event the dispatcher delivers.",
    assign("SUBSCRIPTIONS", tuple(subs)),
    "",
  ].join("\n");
}

/**
 * Constants named after contracts: each kept apart from the module's own names, the names it
 * imports and every other such constant (agent `ticket_updates` beside entity `ticket`).
 */
function specConstants(
  ir: DomainIR,
  runnable: ReturnType<typeof runnableAgents>,
  entities: readonly EntityIR[],
): { pathConstant: Map<string, string>; agentConstant: Map<string, string> } {
  const taken = new Set(["AGENTS", "SUBSCRIPTIONS", "AgentSpec", "UpdatePath", "Rule", "expr"]);
  for (const e of entities) taken.add(metaConstant(e.name)).add(`${e.className}Update`);
  for (const w of ir.workflows) taken.add(constantName(w.name));
  const claim = (name: string, suffix: string): string => {
    let n = name;
    for (let i = 2; taken.has(n); i++) n = i === 2 ? `${name}${suffix}` : `${name}${suffix}_${i - 1}`;
    taken.add(n);
    return n;
  };
  const pathConstant = new Map(entities.map((e) => [e.fqn, claim(`${constantName(e.name)}_UPDATES`, "_PATH")]));
  const agentConstant = new Map(runnable.map(({ agent: a }) => [a.fqn, claim(constantName(a.name), "_AGENT")]));
  return { pathConstant, agentConstant };
}

/** `NAME = UpdatePath(...)`: how an agent's change to `e` is validated and filled, as PATCH does it. */
function updatePath(ir: DomainIR, e: EntityIR, imp: Imports, name: string): string {
  const route = updateRoute(ir, e);
  const update = route?.endpoints.find((x) => x.operation === "update");
  // The rules PATCH enforces: the create's, then the update's own.
  const create = route?.endpoints.find((x) => x.operation === "create");
  const rules = [...(create?.validation ?? []), ...updateOwnRules(create, update)];
  const workflow = ir.workflows.find((w) => w.fqn === e.stateMachine);
  imp.add("app.domain", metaConstant(e.name));
  imp.add(`app.models.${pyModuleName(e.name)}`, `${e.className}Update`);
  if (rules.length) {
    if (rules.some((r) => usesExprModule(r.expr))) imp.add("app", "expr");
    imp.add("app.rules", "Rule");
  }
  if (workflow) imp.add("app.workflows", constantName(workflow.name));
  const args: PyExpr[] = [
    kw("meta", metaConstant(e.name)),
    kw("model", `${e.className}Update`),
    ...(rules.length ? [kw("rules", rulesTuple(rules))] : []),
    kw("fill", fillDict(updateFill(e, update))),
    ...(workflow ? [kw("workflow", constantName(workflow.name))] : []),
  ];
  return assign(name, exploded(call("UpdatePath", args)));
}

/** `NAME = AgentSpec(...)`: one agent, with a hint of what each field it updates may hold. */
function agentSpec(a: AgentIR, e: EntityIR, name: string, path: string): string {
  const fields = new Map(e.fields.map((f) => [f.name, f]));
  const hints = a.updates.map(
    (field) => [pyStr(field), str(fields.get(field) ? fieldHint(fields.get(field) as FieldIR) : "a value")] as const,
  );
  const args: PyExpr[] = [
    kw("fqn", pyStr(a.fqn)),
    kw("name", pyStr(a.name)),
    kw("description", str(a.description)),
    kw("entity", pyStr(e.name)),
    kw("fields", tuple(a.inputFields.map(pyStr))),
    kw("updates", tuple(a.updates.map(pyStr))),
    kw("threshold", String(a.threshold)),
    kw("approach", str(a.approach)),
    kw("constraints", tuple(a.constraints.map((c) => str(c)))),
    kw("hints", exploded(dict(hints))),
    kw("fallback", a.fallback.action === "set" ? pyValue(a.fallback.values) : "None"),
    kw("path", path),
  ];
  return assign(name, exploded(call("AgentSpec", args)));
}

/** Entities whose runs endpoint the compiler decided (entity.api.agentRuns), with their Route. */
function runEndpoints(ir: DomainIR): { entity: EntityIR; route: RouteIR; path: string }[] {
  const routes = new Map(ir.routes.map((r) => [r.fqn, r]));
  const out: { entity: EntityIR; route: RouteIR; path: string }[] = [];
  for (const entity of ir.entities) {
    const route = entity.api ? routes.get(entity.api.route) : undefined;
    if (route && entity.api?.agentRuns) out.push({ entity, route, path: entity.api.agentRuns });
  }
  return out.sort((a, b) => compareText(a.entity.name, b.entity.name));
}

/** app/routes/agent_runs.py: `GET {base_path}/{id}/agent-runs` per entity agents change. */
export function generateAgentRunsRoutes(ir: DomainIR): string {
  const imp = new Imports();
  imp.add("uuid", "UUID");
  imp.add("fastapi", "APIRouter");
  imp.add("app.agents", "AgentRunList");
  imp.add("app.agents", "runs_of");
  imp.add("app.errors", "error_responses");
  imp.add("app.errors", "not_found");
  imp.add("app.responses", "ORJSONResponse");
  imp.add("app.responses", "CheckedRoute");
  const roleSets = new Map<string, string[]>();
  const handlers = runEndpoints(ir).map(({ entity, route, path }) => {
    const tag = route.basePath.replace(/^\//, "") || entity.name;
    const get = route.endpoints.find((x) => x.operation === "get");
    const statuses = operationStatuses({ ir, op: "get", endpoint: get, workflow: undefined });
    const options = [
      pyStr(path.replace("{id}", "{record_id}")),
      "response_model=AgentRunList",
      `operation_id=${pyStr(`${tag}-agent-runs`)}`,
      `summary=${pyStr(`Agent runs of a ${entity.label.toLowerCase()}`)}`,
      `tags=[${pyStr(tag)}]`,
      `responses=error_responses(${statuses.join(", ")})`,
    ];
    if (ir.auth !== null) {
      const roles = [...(get?.roles ?? [])].sort();
      const name = rolesConstant(roles);
      roleSets.set(name, roles);
      options.push(`dependencies=${name}`);
    }
    return [
      pyCall("@router.get", options),
      pyAsyncDef(
        `${entity.name}_agent_runs`,
        ["record_id: UUID", `repo: ${imp.add("app.deps", repositoryAlias(entity.className))}`],
        "ORJSONResponse",
      ),
      "    if await repo.get(record_id) is None:",
      `        raise not_found(${pyStr(entity.name)}, record_id)`,
      `    return ORJSONResponse({"items": await runs_of(${pyStr(entity.name)}, record_id)})`,
    ].join("\n");
  });
  if (roleSets.size) imp.add("app.deps", "role_dependencies");
  const roleConstants = renderRoleConstants(roleSets);
  return [
    hashHeader(),
    '"""Read-only: the agent runs of a record, newest first (the agents themselves run off the request path)."""',
    "",
    imp.render(),
    "",
    "router = APIRouter(route_class=CheckedRoute)",
    "",
    ...(roleConstants.length ? [...roleConstants, ""] : []),
    "",
    `${handlers.join("\n\n\n")}\n`,
  ].join("\n");
}
