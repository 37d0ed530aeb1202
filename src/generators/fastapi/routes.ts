import type { ComputedIR, DomainIR, EndpointIR, EntityIR, Operation, RouteIR, ValidationRuleIR, WorkflowIR } from "../../compiler/ir.js";
import { hashHeader } from "../header.js";
import { assign, call, condition, dict, kw, lambda, type PyExpr, str, tuple } from "./py-layout.js";
import { constantName, Imports, pyCall, pyDocstring, pyStr, pyStrTuple, pyValue } from "./python.js";

type Fill = Record<string, string>;

/** Computed fields (except sequences, numbered by the repository) set when a record is created. */
export function createFill(entity: EntityIR, endpoint: EndpointIR | undefined): Fill {
  const out: Fill = {};
  for (const f of entity.fields) {
    if (f.computed && f.computed.kind !== "sequence") out[f.name] = f.computed.kind;
  }
  return { ...out, ...autoFill(endpoint) };
}

/**
 * Computed fields refreshed on every change: `now_on_update`, and `current_user` fields that are
 * not immutable (an `updated_by`); plus the endpoint's own `auto_fields`.
 */
export function updateFill(entity: EntityIR, endpoint: EndpointIR | undefined): Fill {
  const out: Fill = {};
  for (const f of entity.fields) {
    if (f.computed?.kind === "now_on_update" || (f.computed?.kind === "current_user" && !f.immutable)) out[f.name] = f.computed.kind;
  }
  return { ...out, ...autoFill(endpoint) };
}

function autoFill(endpoint: EndpointIR | undefined): Fill {
  const out: Fill = {};
  for (const [name, c] of Object.entries(endpoint?.autoFields ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if ((c as ComputedIR).kind !== "sequence") out[name] = c.kind;
  }
  return out;
}

function fillDict(fill: Fill): PyExpr {
  return dict(Object.entries(fill).map(([k, v]) => [pyStr(k), pyStr(v)] as const));
}

function rulesTuple(rules: ValidationRuleIR[]): PyExpr {
  return tuple(
    rules.map((r) =>
      call("Rule", [
        kw("source", str(r.source)),
        kw("check", lambda("values", condition(r.expr))),
        kw("status", String(r.onFail.status)),
        kw("error", pyStr(r.onFail.error)),
        ...(r.onFail.message ? [kw("message", str(r.onFail.message))] : []),
      ]),
    ),
  );
}

function eventsTuple(endpoint: EndpointIR | undefined): string[] {
  const out: string[] = [];
  for (const s of endpoint?.sideEffects ?? []) if ("emitEvent" in s) out.push(s.emitEvent);
  return out;
}

/** Names of the role dependency lists: `["admin", "agent"]` -> `ADMIN_OR_AGENT`. */
function rolesConstant(roles: string[]): string {
  return roles.length === 0 ? "AUTHENTICATED" : roles.map((r) => constantName(r.replace(/[^A-Za-z0-9_]/g, "_"))).join("_OR_");
}

/**
 * The route decorator. Paths answer with and without a trailing slash through
 * app/edge.py rather than a twin route per path: every extra route is one more
 * regular expression tried on every request.
 */
function decorators(method: string, path: string, args: string[]): string {
  return pyCall(`@router.${method}`, [pyStr(path), ...args]);
}

export interface RouteModule {
  module: string;
  content: string;
}

/** app/routes/<module>.py for one Route contract. */
export function generateRouteModule(ir: DomainIR, route: RouteIR, entity: EntityIR, module: string): RouteModule {
  const auth = ir.auth !== null;
  const cls = entity.className;
  const label = entity.label.toLowerCase();
  const plural = module;
  const tag = entity.basePath.replace(/^\//, "") || module;
  const workflow: WorkflowIR | undefined = ir.workflows.find((w) => w.fqn === entity.stateMachine);
  const ep = (op: Operation): EndpointIR | undefined => route.endpoints.find((e) => e.operation === op);
  const links = ep("get")?.hateoas ?? { self: `${entity.basePath}/{id}` };
  const lookup = `    repo = repository(${pyStr(entity.name)})`;
  const meta = constantName(entity.name);

  const roleSets = new Map<string, string[]>();
  const deps = (endpoint: EndpointIR | undefined): string[] => {
    if (!auth || !endpoint) return [];
    const roles = [...endpoint.roles].sort();
    const name = rolesConstant(roles);
    roleSets.set(name, roles);
    return [`dependencies=${name}`];
  };
  const common = (op: Operation, fallback: string): string[] => {
    const e = ep(op);
    const summary = e?.summary || fallback;
    return [`operation_id=${pyStr(`${tag}-${op}`)}`, `summary=${pyStr(summary)}`, ...deps(e)];
  };

  const body: string[] = [];
  const constants: string[] = [assign("LINKS", pyValue(links))];

  // list
  body.push(
    decorators("get", "", [`response_model=${cls}List`, ...common("list", `List ${entity.labelPlural.toLowerCase()}`)]),
    `async def list_${plural}(params: Annotated[${cls}Filters, Query()]) -> ORJSONResponse:`,
    lookup,
    "    page = await repo.list(list_query(params))",
    "    return ORJSONResponse(page_body(page, LINKS))",
    "",
    "",
  );
  // get
  body.push(
    decorators("get", "/{record_id}", [`response_model=${cls}Public`, ...common("get", `Get a ${label}`)]),
    `async def get_${entity.name}(record_id: UUID) -> ORJSONResponse:`,
    lookup,
    "    record = await repo.get(record_id)",
    "    if record is None:",
    `        raise not_found(${pyStr(entity.name)}, record_id)`,
    "    return ORJSONResponse(with_links(record, LINKS))",
    "",
    "",
  );
  // create
  const create = ep("create");
  const createRules = create?.validation ?? [];
  const createEvents = eventsTuple(create);
  constants.push(assign("CREATE_FILL", fillDict(createFill(entity, create))));
  if (createRules.length) constants.push(assign("CREATE_RULES", rulesTuple(createRules)));
  body.push(
    decorators("post", "", [`response_model=${cls}Public`, "status_code=201", ...common("create", `Create a ${label}`)]),
    `async def create_${entity.name}(body: ${cls}Create, user: CurrentUser) -> ORJSONResponse:`,
    lookup,
    "    values = body.model_dump(by_alias=True)",
    ...(createRules.length ? ["    enforce(CREATE_RULES, values)"] : []),
    "    fill(values, CREATE_FILL, user.id)",
    ...(workflow ? [`    values["state"] = ${constantName(workflow.name)}.initial`] : []),
    `    record = await repo.create(values, events=${pyStrTuple(createEvents)})`,
    "    return ORJSONResponse(with_links(record, LINKS), status_code=201)",
    "",
    "",
  );
  // update
  const update = ep("update");
  const updateRules = update?.validation ?? [];
  constants.push(assign("UPDATE_FILL", fillDict(updateFill(entity, update))));
  if (updateRules.length) constants.push(assign("UPDATE_RULES", rulesTuple(updateRules)));
  body.push(
    decorators("patch", "/{record_id}", [`response_model=${cls}Public`, ...common("update", `Update a ${label}`)]),
    `async def update_${entity.name}(record_id: UUID, body: ${cls}Update, user: CurrentUser) -> ORJSONResponse:`,
    lookup,
    "    changes = body.model_dump(by_alias=True, exclude_unset=True)",
    `    check_changes(${meta}, changes)`,
    ...(updateRules.length
      ? [
          "    current = await repo.get(record_id)",
          "    if current is None:",
          `        raise not_found(${pyStr(entity.name)}, record_id)`,
          "    enforce(UPDATE_RULES, {**current, **changes})",
        ]
      : []),
    "    fill(changes, UPDATE_FILL, user.id)",
    `    record = await repo.update(record_id, changes, events=${pyStrTuple(eventsTuple(update))})`,
    "    if record is None:",
    `        raise not_found(${pyStr(entity.name)}, record_id)`,
    "    return ORJSONResponse(with_links(record, LINKS))",
    "",
    "",
  );
  // delete
  const del = ep("delete");
  body.push(
    decorators("delete", "/{record_id}", ["status_code=204", ...common("delete", `Delete a ${label}`)]),
    `async def delete_${entity.name}(record_id: UUID, user: CurrentUser) -> Response:`,
    lookup,
    `    if not await repo.delete(record_id, user.id, events=${pyStrTuple(eventsTuple(del))}):`,
    `        raise not_found(${pyStr(entity.name)}, record_id)`,
    "    return Response(status_code=204)",
    "",
    "",
  );
  // transition
  const move = ep("transition");
  if (workflow && move) {
    constants.push(assign("STATE_FILL", fillDict(updateFill(entity, move))));
    const wf = constantName(workflow.name);
    body.push(
      decorators("put", "/{record_id}/state", [`response_model=${cls}Public`, ...common("transition", `Move a ${label} to another state`)]),
      `async def move_${entity.name}(record_id: UUID, body: StateChange, user: CurrentUser) -> ORJSONResponse:`,
      lookup,
      "    current = await repo.get(record_id)",
      "    if current is None:",
      `        raise not_found(${pyStr(entity.name)}, record_id)`,
      `    effects = ${wf}.plan(current, body.state)`,
      "    changes = dict(effects.set)",
      "    fill(changes, STATE_FILL, user.id)",
      eventsTuple(move).length
        ? `    events = (*effects.events, ${eventsTuple(move).map(pyStr).join(", ")})`
        : "    events = effects.events",
      '    record = await repo.transition(record_id, body.state, changes, events, expected_state=current["state"])',
      "    if record is None:",
      '        raise ApiError(409, "conflict", "the record changed meanwhile; read it again and retry")',
      "    return ORJSONResponse(with_links(record, LINKS))",
      "",
      "",
    );
  }

  const roleConstants = [...roleSets.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, roles]) => `${name} = role_dependencies(${roles.map(pyStr).join(", ")})`);

  const imp = new Imports();
  imp.add("typing", "Annotated");
  imp.add("uuid", "UUID");
  for (const n of ["APIRouter", "Query", "Response"]) imp.add("fastapi", n);
  if (createRules.length || updateRules.length) {
    imp.add("app", "expr");
    imp.add("app.rules", "Rule");
    imp.add("app.rules", "enforce");
  }
  for (const n of ["CurrentUser", "repository", ...(auth ? ["role_dependencies"] : [])]) imp.add("app.deps", n);
  imp.add("app.domain", meta);
  imp.add("app.errors", "not_found");
  for (const suffix of ["Create", "Filters", "List", "Public", "Update"]) imp.add(`app.models.${entity.name}`, `${cls}${suffix}`);
  for (const n of ["check_changes", "fill", "list_query", "page_body", "with_links"]) imp.add("app.records", n);
  imp.add("app.responses", "ORJSONResponse");
  if (workflow && move) {
    imp.add("app.errors", "ApiError");
    imp.add("app.workflow", "StateChange");
    imp.add("app.workflows", constantName(workflow.name));
  }
  const content = [
    hashHeader(),
    pyDocstring(`${humanList(entity.labelPlural)} API (${route.fqn}).`, route.description ? `${route.description}.` : ""),
    "",
    imp.render(),
    "",
    `router = APIRouter(prefix=${pyStr(entity.basePath)}, tags=[${pyStr(tag)}])`,
    "",
    ...(roleConstants.length ? [...roleConstants, ""] : []),
    ...constants,
    "",
    "",
    body.join("\n").replace(/\n+$/, "\n"),
  ].join("\n");
  return { module, content };
}

function humanList(labelPlural: string): string {
  return labelPlural.charAt(0).toUpperCase() + labelPlural.slice(1);
}
