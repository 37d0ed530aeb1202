import type {
  ComputedIR,
  DomainIR,
  EndpointIR,
  EntityApiIR,
  EntityIR,
  Operation,
  RouteIR,
  ValidationRuleIR,
  WorkflowIR,
} from "../../compiler/ir.js";
import { compareText } from "../../contracts/findings.js";
import { hashHeader } from "../header.js";
import { updateOwnRules, writeRules } from "./models.js";
import { assign, call, condition, dict, exploded, kw, lambda, type PyExpr, str, tuple } from "./py-layout.js";
import {
  constantName,
  Imports,
  metaConstant,
  pyAsyncDef,
  pyCall,
  pyDocstring,
  pyModuleName,
  pyStr,
  pyStrTuple,
  pyValue,
  repositoryAlias,
  roleSetConstant,
  usesExprModule,
} from "./python.js";
import type { DocumentedRule } from "./rule-schema.js";
import { operationStatuses } from "./statuses.js";

type Fill = Record<string, string>;

/**
 * What app/records.fill puts in a field computed as `kind`: a value of the field's own type, so both
 * repositories store what they are given (a UUID object bound to a text column is a 500 on
 * PostgreSQL; a datetime in a date field comes back as a datetime from memory).
 */
function fillKind(entity: EntityIR, name: string, kind: string): string {
  const type = entity.fields.find((f) => f.name === name)?.type;
  if (kind === "uuid" && type !== undefined && type !== "uuid") return "uuid_text";
  if ((kind === "now" || kind === "now_on_update") && type === "date") return "today";
  return kind;
}

/** Computed fields (except sequences, numbered by the repository) set when a record is created. */
export function createFill(entity: EntityIR, endpoint: EndpointIR | undefined): Fill {
  const out: Fill = {};
  for (const f of entity.fields) {
    if (f.computed && f.computed.kind !== "sequence") out[f.name] = fillKind(entity, f.name, f.computed.kind);
  }
  return { ...out, ...autoFill(entity, endpoint) };
}

/**
 * Computed fields refreshed on every change: `now_on_update`, and `current_user` fields that are
 * not immutable (an `updated_by`); plus the endpoint's own `auto_fields`.
 */
export function updateFill(entity: EntityIR, endpoint: EndpointIR | undefined): Fill {
  const out: Fill = {};
  for (const f of entity.fields) {
    if (f.computed?.kind === "now_on_update" || (f.computed?.kind === "current_user" && !f.immutable)) {
      out[f.name] = fillKind(entity, f.name, f.computed.kind);
    }
  }
  return { ...out, ...autoFill(entity, endpoint) };
}

function autoFill(entity: EntityIR, endpoint: EndpointIR | undefined): Fill {
  const out: Fill = {};
  for (const [name, c] of Object.entries(endpoint?.autoFields ?? {}).sort(([a], [b]) => compareText(a, b))) {
    if ((c as ComputedIR).kind !== "sequence") out[name] = fillKind(entity, name, c.kind);
  }
  return out;
}

export function fillDict(fill: Fill): PyExpr {
  return dict(Object.entries(fill).map(([k, v]) => [pyStr(k), pyStr(v)] as const));
}

export function rulesTuple(rules: ValidationRuleIR[]): PyExpr {
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

/** The outbox event a route's `invoke: <agent>` side effect writes; app/agents.py delivers it to that agent. */
export function invokeEvent(agentFqn: string): string {
  return `invoke:${agentFqn}`;
}

function eventsTuple(endpoint: EndpointIR | undefined): string[] {
  const out: string[] = [];
  // An `invoke: <agent>` side effect is an outbox event too: the agent runs off the request path.
  for (const s of endpoint?.sideEffects ?? []) {
    if ("emitEvent" in s) out.push(s.emitEvent);
    else if (s.invoke.startsWith("agent/")) out.push(invokeEvent(s.invoke));
  }
  return out;
}

/** Names of the role dependency lists: `["admin", "agent"]` -> `ADMIN_OR_AGENT`. */
export function rolesConstant(roles: readonly string[]): string {
  if (roles.length === 0) return "AUTHENTICATED";
  return roleSetConstant(roles.map((r) => constantName(r.replace(/[^A-Za-z0-9_]/g, "_"))).join("_OR_"));
}

/** One handler of a route module, as data: its decorator, its signature and its statements. */
export interface HandlerModel {
  method: "get" | "post" | "patch" | "delete" | "put";
  /** Relative to the router's prefix. */
  path: string;
  /** Decorator arguments after the path. */
  options: string[];
  name: string;
  params: string[];
  returns: "ORJSONResponse" | "Response";
  /** Statements of the body, one level deep (nested lines carry their extra indentation). */
  body: string[];
}

/** A route module (app/routes/<module>.py) as data, rendered by renderRouteModule. */
export interface RouteModuleModel {
  docstring: string;
  imports: Imports;
  prefix: string;
  tag: string;
  /** Role dependency lists by constant name (`ADMIN_OR_AGENT` -> admin, agent). */
  roleSets: ReadonlyMap<string, readonly string[]>;
  constants: { name: string; value: PyExpr }[];
  handlers: HandlerModel[];
}

/** What the handler builders share while one module is built. */
interface RouteContext {
  ir: DomainIR;
  route: RouteIR;
  entity: EntityIR;
  /** What the compiler decided the entity's API serves: the handlers' methods and paths. */
  api: EntityApiIR;
  module: string;
  cls: string;
  label: string;
  tag: string;
  workflow: WorkflowIR | undefined;
  imports: Imports;
  roleSets: Map<string, readonly string[]>;
  constants: { name: string; value: PyExpr }[];
}

/** The method and the path below the router's prefix that the compiler decided for `op`. */
function served(ctx: RouteContext, op: Operation): Pick<HandlerModel, "method" | "path"> {
  const found = ctx.api.operations.find((o) => o.operation === op);
  if (!found) throw new Error(`${ctx.route.fqn}: the compiler serves no ${op} operation for ${ctx.entity.fqn}`);
  return {
    method: found.method.toLowerCase() as HandlerModel["method"],
    path: found.path.slice(ctx.api.basePath.length).replace("{id}", "{record_id}"),
  };
}

function endpoint(ctx: RouteContext, op: Operation): EndpointIR | undefined {
  return ctx.route.endpoints.find((e) => e.operation === op);
}

/**
 * operation_id, summary, the failure statuses declared in the document (statuses.ts) and (with
 * auth) the role check every handler's decorator carries.
 */
function commonOptions(ctx: RouteContext, op: Operation, fallback: string): string[] {
  const e = endpoint(ctx, op);
  const out = [`operation_id=${pyStr(`${ctx.tag}-${op}`)}`, `summary=${pyStr(e?.summary || fallback)}`];
  const statuses = operationStatuses({ ir: ctx.ir, op, endpoint: e, workflow: ctx.workflow });
  out.push(`responses=error_responses(${statuses.join(", ")})`);
  if (ctx.ir.auth !== null && e) {
    const roles = [...e.roles].sort();
    const name = rolesConstant(roles);
    ctx.roleSets.set(name, roles);
    out.push(`dependencies=${name}`);
  }
  return out;
}

/**
 * The validation rules of a write operation as its document tells them: every rule in
 * `x-validation-rules`, and the ones the request schema cannot express (a rule relating fields)
 * in the description too, as the only reason a schema-valid request may be refused. Defines the
 * `openapi_extra` constant and returns its name; null when the operation has no rules.
 */
function rulesDoc(ctx: RouteContext, op: "create" | "update", constant: string): string | null {
  const e = endpoint(ctx, op);
  const compiled = writeRules(ctx.entity, e, endpoint(ctx, "create"));
  if (compiled.rules.length === 0) return null;
  const notInSchema = compiled.rules.filter((r) => !r.inSchema).map((r) => `\`${r.rule.source}\``);
  const merged = op === "update" ? " on the record as it would be after the change" : "";
  const description = [
    `Validation rules are checked${merged}; see x-validation-rules.`,
    ...(notInSchema.length ? [`The request schema cannot express (fields related, or stored values): ${notInSchema.join("; ")}.`] : []),
  ].join(" ");
  const rule = ({ rule: r, inSchema }: DocumentedRule): PyExpr =>
    exploded(
      dict([
        [pyStr("rule"), str(r.source)],
        [pyStr("status"), String(r.onFail.status)],
        [pyStr("error"), pyStr(r.onFail.error)],
        ...(r.onFail.message ? [[pyStr("message"), str(r.onFail.message)] as const] : []),
        [pyStr("in_schema"), inSchema ? "True" : "False"],
      ]),
    );
  // openapi_extra is merged into the operation object of the document.
  ctx.constants.push({
    name: constant,
    value: exploded(
      dict([
        [pyStr("description"), str(description)],
        [pyStr("x-validation-rules"), { kind: "list", items: compiled.rules.map(rule) }],
      ]),
    ),
  });
  return constant;
}

/** The `openapi_extra` option naming a document constant, if there is one. */
const openapiExtra = (constant: string | null): string[] => (constant ? [`openapi_extra=${constant}`] : []);

/**
 * The caller's id in a handler, and the parameter that brings the caller. Without an auth contract
 * every request is the anonymous administrator: the handlers name it directly rather than have
 * FastAPI solve a dependency per request to hand over a constant.
 */
const callerId = (ctx: RouteContext): string => (ctx.ir.auth === null ? "ANONYMOUS.id" : "user.id");
const callerParam = (ctx: RouteContext): string[] => (ctx.ir.auth === null ? [] : ["user: CurrentUser"]);

/** The handler's repository, a dependency (app/deps.py) that `app.dependency_overrides` can swap. */
const repoParam = (ctx: RouteContext): string => `repo: ${repositoryAlias(ctx.cls)}`;
/**
 * A call of the entity's hook (the user's app/custom/hooks/<entity>.py, see docs/customizing.md):
 * every hook takes its subject, then the caller. After-hooks get the record as the API returns it.
 */
const hook = (ctx: RouteContext, name: string, subject: string): string => `await hooks.${name}(${subject}, ${caller(ctx)})`;
const caller = (ctx: RouteContext): string => (ctx.ir.auth === null ? "ANONYMOUS" : "user");
/**
 * An after-hook given the stored record as the API returns it, a validated public model. Through
 * records.after_hook, which skips the hook (and building its model) while the hook is still the
 * empty function charter wrote.
 */
const afterHook = (ctx: RouteContext, name: string): string =>
  `await after_hook(hooks.${name}, ${ctx.cls}Public, record, LINKS, ${caller(ctx)})`;
const notFound = (ctx: RouteContext): string => `raise not_found(${pyStr(ctx.entity.name)}, record_id)`;

function listHandler(ctx: RouteContext): HandlerModel {
  return {
    ...served(ctx, "list"),
    options: [
      `response_model=${ctx.cls}List`,
      ...commonOptions(ctx, "list", `List ${ctx.entity.labelPlural.toLowerCase()}`),
      `openapi_extra=query_parameters(${ctx.cls}Filters)`,
    ],
    name: `list_${ctx.module}`,
    // The query is validated in one pass by the Filters model (records.parse_query), not by FastAPI.
    params: ["request: Request", repoParam(ctx)],
    returns: "ORJSONResponse",
    body: [
      `page = await repo.list(list_query(repo.meta, parse_query(${ctx.cls}Filters, request)))`,
      "return ORJSONResponse(page_body(page, LINKS))",
    ],
  };
}

function getHandler(ctx: RouteContext): HandlerModel {
  return {
    ...served(ctx, "get"),
    options: [`response_model=${ctx.cls}Public`, ...commonOptions(ctx, "get", `Get a ${ctx.label}`)],
    name: `get_${ctx.entity.name}`,
    params: ["record_id: UUID", repoParam(ctx)],
    returns: "ORJSONResponse",
    body: [
      "record = await repo.get(record_id)",
      "if record is None:",
      `    ${notFound(ctx)}`,
      "return ORJSONResponse(with_links(record, LINKS))",
    ],
  };
}

function createHandler(ctx: RouteContext): HandlerModel {
  const create = endpoint(ctx, "create");
  const rules = create?.validation ?? [];
  ctx.constants.push({ name: "CREATE_FILL", value: fillDict(createFill(ctx.entity, create)) });
  if (rules.length) ctx.constants.push({ name: "CREATE_RULES", value: rulesTuple(rules) });
  const events = pyStrTuple(eventsTuple(create));
  return {
    ...served(ctx, "create"),
    options: [
      `response_model=${ctx.cls}Public`,
      "status_code=201",
      ...commonOptions(ctx, "create", `Create a ${ctx.label}`),
      // The Idempotency-Key header is declared here and read by the handler (app/idempotency.py).
      `openapi_extra=with_idempotency_key(${rulesDoc(ctx, "create", "CREATE_RULES_DOC") ?? ""})`,
    ],
    name: `create_${ctx.entity.name}`,
    params: [`body: ${ctx.cls}Create`, "request: Request", repoParam(ctx), ...callerParam(ctx)],
    returns: "Response",
    body: [
      "values = body.model_dump(by_alias=True)",
      ...(rules.length ? ["enforce(CREATE_RULES, values)"] : []),
      `fill(values, CREATE_FILL, ${callerId(ctx)})`,
      ...(ctx.workflow ? ['values["state"] = WORKFLOW.initial'] : []),
      hook(ctx, "before_create", "body"),
      "key = idempotency_key(request)",
      "if key is not None:",
      `    response = await create_once(repo, key, ${callerId(ctx)}, body, values, ${events}, LINKS)`,
      // A replayed response created nothing: the hook ran when the first request did.
      `    if response.status_code == 201 and "idempotent-replayed" not in response.headers:`,
      `        ${hook(ctx, "after_create", `${ctx.cls}Public.model_validate_json(bytes(response.body))`)}`,
      "    return response",
      `record = await repo.create(values, events=${events})`,
      afterHook(ctx, "after_create"),
      "return ORJSONResponse(with_links(record, LINKS), status_code=201)",
    ],
  };
}

/**
 * The rules a PATCH enforces on the record as it would be after the change: the create's rules
 * (a record must keep satisfying what it was created under) and the update's own. The name of the
 * constant holding them, or null when there are none.
 */
function updateRules(ctx: RouteContext, update: EndpointIR | undefined): string | null {
  const createRules = endpoint(ctx, "create")?.validation ?? [];
  const own = updateOwnRules(endpoint(ctx, "create"), update);
  if (own.length === 0) return createRules.length ? "CREATE_RULES" : null;
  const value = rulesTuple(own);
  const items = typeof value === "object" && value.kind === "tuple" ? value.items : [value];
  ctx.constants.push({ name: "UPDATE_RULES", value: tuple(createRules.length ? ["*CREATE_RULES", ...items] : items) });
  return "UPDATE_RULES";
}

function updateHandler(ctx: RouteContext): HandlerModel {
  const update = endpoint(ctx, "update");
  ctx.constants.push({ name: "UPDATE_FILL", value: fillDict(updateFill(ctx.entity, update)) });
  const rules = updateRules(ctx, update);
  const events = pyStrTuple(eventsTuple(update));
  return {
    ...served(ctx, "update"),
    options: [
      `response_model=${ctx.cls}Public`,
      ...commonOptions(ctx, "update", `Update a ${ctx.label}`),
      ...openapiExtra(rulesDoc(ctx, "update", "UPDATE_RULES_DOC")),
    ],
    name: `update_${ctx.entity.name}`,
    params: ["record_id: UUID", `body: ${ctx.cls}Update`, repoParam(ctx), ...callerParam(ctx)],
    returns: "ORJSONResponse",
    body: [
      "changes = body.model_dump(by_alias=True, exclude_unset=True)",
      "check_changes(META, changes)",
      hook(ctx, "before_update", "record_id, body"),
      `fill(changes, UPDATE_FILL, ${callerId(ctx)})`,
      // The rules see the record as the change leaves it, read under the write's lock (modify).
      rules
        ? `record = await repo.modify(record_id, checked(${rules}, changes, events=${events}))`
        : `record = await repo.update(record_id, changes, events=${events})`,
      "if record is None:",
      `    ${notFound(ctx)}`,
      afterHook(ctx, "after_update"),
      "return ORJSONResponse(with_links(record, LINKS))",
    ],
  };
}

function deleteHandler(ctx: RouteContext): HandlerModel {
  return {
    ...served(ctx, "delete"),
    options: ["status_code=204", ...commonOptions(ctx, "delete", `Delete a ${ctx.label}`)],
    name: `delete_${ctx.entity.name}`,
    params: ["record_id: UUID", repoParam(ctx), ...callerParam(ctx)],
    returns: "Response",
    body: [
      hook(ctx, "before_delete", "record_id"),
      `if not await repo.delete(record_id, ${callerId(ctx)}, events=${pyStrTuple(eventsTuple(endpoint(ctx, "delete")))}):`,
      `    ${notFound(ctx)}`,
      hook(ctx, "after_delete", "record_id"),
      "return Response(status_code=204)",
    ],
  };
}

/**
 * PUT {base}/{id}/state: only for an entity with a state machine and a transition endpoint. The
 * move is decided (allowed target, guard, effects) on the record as the write holds it, so a
 * concurrent update cannot break the guard between the check and the change of state.
 */
function transitionHandler(ctx: RouteContext, move: EndpointIR): HandlerModel {
  ctx.constants.push({ name: "STATE_FILL", value: fillDict(updateFill(ctx.entity, move)) });
  return {
    ...served(ctx, "transition"),
    options: [`response_model=${ctx.cls}Public`, ...commonOptions(ctx, "transition", `Move a ${ctx.label} to another state`)],
    name: `move_${ctx.entity.name}`,
    params: ["record_id: UUID", "body: StateChange", repoParam(ctx), ...callerParam(ctx)],
    returns: "ORJSONResponse",
    body: [
      "changes: dict[str, Any] = {}",
      `fill(changes, STATE_FILL, ${callerId(ctx)})`,
      hook(ctx, "before_transition", "record_id, body.state"),
      `move = WORKFLOW.move(body.state, changes, events=${pyStrTuple(eventsTuple(move))})`,
      "record = await repo.modify(record_id, move)",
      "if record is None:",
      `    ${notFound(ctx)}`,
      afterHook(ctx, "after_transition"),
      "return ORJSONResponse(with_links(record, LINKS))",
    ],
  };
}

/** The model of app/routes/<module>.py for one Route contract. */
export function buildRouteModule(ir: DomainIR, route: RouteIR, entity: EntityIR, module: string): RouteModuleModel {
  const api = entity.api;
  if (!api || api.route !== route.fqn)
    throw new Error(`${route.fqn} does not serve ${entity.fqn} (the compiler chose ${api?.route ?? "none"})`);
  const links = route.endpoints.find((e) => e.operation === "get")?.hateoas ?? { self: `${api.basePath}/{id}` };
  const ctx: RouteContext = {
    ir,
    route,
    entity,
    api,
    module,
    cls: entity.className,
    label: entity.label.toLowerCase(),
    tag: api.basePath.replace(/^\//, "") || module,
    workflow: ir.workflows.find((w) => w.fqn === entity.stateMachine),
    imports: new Imports(),
    roleSets: new Map(),
    constants: [{ name: "LINKS", value: pyValue(links) }],
  };
  const move = endpoint(ctx, "transition");
  const handlers = [listHandler(ctx), getHandler(ctx), createHandler(ctx), updateHandler(ctx), deleteHandler(ctx)];
  if (ctx.workflow && move) handlers.push(transitionHandler(ctx, move));
  addImports(ctx, handlers);
  return {
    docstring: pyDocstring(`${humanList(entity.labelPlural)} API (${route.fqn}).`, route.description ? `${route.description}.` : ""),
    imports: ctx.imports,
    prefix: api.basePath,
    tag: ctx.tag,
    roleSets: ctx.roleSets,
    constants: ctx.constants,
    handlers,
  };
}

/** The names the handlers use, from the modules that define them. */
function addImports(ctx: RouteContext, handlers: readonly HandlerModel[]): void {
  const imp = ctx.imports;
  const code = handlers.flatMap((h) => h.body).join("\n");
  // Only what the handlers' code names is imported: ruff refuses unused imports.
  imp.add("uuid", "UUID");
  for (const n of ["APIRouter", "Request", "Response"]) imp.add("fastapi", n);
  if (ctx.constants.some((c) => c.name.endsWith("_RULES"))) {
    imp.add("app.rules", "Rule");
    const rules = (["create", "update"] as const).flatMap((op) => endpoint(ctx, op)?.validation ?? []);
    if (rules.some((r) => usesExprModule(r.expr))) imp.add("app", "expr");
  }
  if (code.includes("enforce(")) imp.add("app.rules", "enforce");
  if (code.includes("checked(")) imp.add("app.rules", "checked");
  if (code.includes("create_once(")) {
    imp.add("app.idempotency", "create_once");
    imp.add("app.idempotency", "idempotency_key");
    imp.add("app.idempotency", "with_idempotency_key");
  }
  if (code.includes("dict[str, Any]")) imp.add("typing", "Any");
  for (const n of [repositoryAlias(ctx.cls), "APP_OVERRIDES", ...(ctx.ir.auth !== null ? ["CurrentUser", "role_dependencies"] : [])]) {
    imp.add("app.deps", n);
  }
  if (ctx.ir.auth === null) imp.add("app.principal", "ANONYMOUS");
  imp.add("app.custom.hooks", `${pyModuleName(ctx.entity.name)} as hooks`);
  // Under fixed names: an entity or workflow named like one of the module's own names (`links`, a
  // role's `USER`) would otherwise shadow it.
  imp.add("app.domain", `${metaConstant(ctx.entity.name)} as META`);
  imp.add("app.errors", "not_found");
  imp.add("app.errors", "error_responses");
  for (const suffix of ["Create", "Filters", "List", "Public", "Update"])
    imp.add(`app.models.${pyModuleName(ctx.entity.name)}`, `${ctx.cls}${suffix}`);
  for (const n of ["check_changes", "fill", "list_query", "page_body", "parse_query", "query_parameters", "with_links"]) {
    imp.add("app.records", n);
  }
  if (code.includes("after_hook(")) imp.add("app.records", "after_hook");
  imp.add("app.responses", "ORJSONResponse");
  imp.add("app.responses", "CheckedRoute");
  if (code.includes("ApiError(")) imp.add("app.errors", "ApiError");
  if (ctx.workflow && handlers.some((h) => h.method === "put")) imp.add("app.workflow", "StateChange");
  if (ctx.workflow && code.includes("WORKFLOW.")) {
    imp.add("app.workflows", `${constantName(ctx.workflow.name)} as WORKFLOW`);
  }
}

/**
 * The decorator of a handler. Paths answer with and without a trailing slash through app/edge.py
 * rather than a twin route per path: every extra route is one more regular expression tried on
 * every request.
 */
function renderHandler(h: HandlerModel): string {
  return [
    pyCall(`@router.${h.method}`, [pyStr(h.path), ...h.options]),
    pyAsyncDef(h.name, h.params, h.returns),
    ...h.body.map((line) => `    ${line}`),
  ].join("\n");
}

/** `ADMIN_OR_AGENT = role_dependencies("admin", "agent")` lines of a module's role sets, by name. */
export function renderRoleConstants(roleSets: ReadonlyMap<string, readonly string[]>): string[] {
  return [...roleSets.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([name, roles]) => `${name} = role_dependencies(${roles.map(pyStr).join(", ")})`);
}

/** The text of a route module. */
export function renderRouteModule(m: RouteModuleModel): string {
  const roleConstants = renderRoleConstants(m.roleSets);
  return [
    hashHeader(),
    m.docstring,
    "",
    m.imports.render(),
    "",
    // CheckedRoute: answers validated against their response models while RESPONSE_VALIDATION is on.
    // APP_OVERRIDES: the app serves these routes as its own (app/main.py), with its overrides.
    assign(
      "router",
      call("APIRouter", [
        kw("prefix", pyStr(m.prefix)),
        kw("tags", `[${pyStr(m.tag)}]`),
        kw("route_class", "CheckedRoute"),
        kw("dependency_overrides_provider", "APP_OVERRIDES"),
      ]),
    ),
    "",
    ...(roleConstants.length ? [...roleConstants, ""] : []),
    ...m.constants.map((c) => assign(c.name, c.value)),
    "",
    "",
    `${m.handlers.map(renderHandler).join("\n\n\n")}\n`,
  ].join("\n");
}

export interface RouteModule {
  module: string;
  content: string;
}

/** app/routes/<module>.py for one Route contract: its model, rendered. */
export function generateRouteModule(ir: DomainIR, route: RouteIR, entity: EntityIR, module: string): RouteModule {
  return { module, content: renderRouteModule(buildRouteModule(ir, route, entity, module)) };
}

function humanList(labelPlural: string): string {
  return labelPlural.charAt(0).toUpperCase() + labelPlural.slice(1);
}
