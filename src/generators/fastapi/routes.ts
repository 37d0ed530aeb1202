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
import { compareText } from "../../shared/text.js";
import { hashHeader } from "../header.js";
import { type HookName, hooksConstant } from "./hooks.js";
import { updateOwnRules, writeRules } from "./models.js";
import {
  type Code,
  importsOf,
  localName,
  type PyName,
  plain,
  py,
  pyName,
  renderStatements,
  type Statement,
  statementUses,
  stmt,
} from "./py-code.js";
import { assign, call, condition, dict, exploded, kw, lambda, type PyExpr, str, tuple } from "./py-layout.js";
import {
  constantName,
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

/** The imported names the route modules use (entity-specific ones are made in buildRouteModule). */
const N = {
  UUID: pyName("uuid", "UUID"),
  Any: pyName("typing", "Any"),
  APIRouter: pyName("fastapi", "APIRouter"),
  Request: pyName("fastapi", "Request"),
  Response: pyName("fastapi", "Response"),
  expr: pyName("app", "expr"),
  CurrentUser: pyName("app.deps", "CurrentUser"),
  role_dependencies: pyName("app.deps", "role_dependencies"),
  error_responses: pyName("app.errors", "error_responses"),
  not_found: pyName("app.errors", "not_found"),
  nothing: pyName("app.hooks", "nothing"),
  create_once: pyName("app.idempotency", "create_once"),
  idempotency_key: pyName("app.idempotency", "idempotency_key"),
  with_idempotency_key: pyName("app.idempotency", "with_idempotency_key"),
  ANONYMOUS: pyName("app.principal", "ANONYMOUS"),
  check_changes: pyName("app.records", "check_changes"),
  fill: pyName("app.records", "fill"),
  list_query: pyName("app.records", "list_query"),
  page_body: pyName("app.records", "page_body"),
  parse_query: pyName("app.records", "parse_query"),
  query_parameters: pyName("app.records", "query_parameters"),
  with_links: pyName("app.records", "with_links"),
  CheckedRoute: pyName("app.responses", "CheckedRoute"),
  ORJSONResponse: pyName("app.responses", "ORJSONResponse"),
  Rule: pyName("app.rules", "Rule"),
  checked: pyName("app.rules", "checked"),
  enforce: pyName("app.rules", "enforce"),
  StateChange: pyName("app.workflow", "StateChange"),
} as const;

/** One handler of a route module, as data: its decorator, its signature and its statements. */
export interface HandlerModel {
  method: "get" | "post" | "patch" | "delete" | "put";
  /** Relative to the router's prefix. */
  path: string;
  /** Decorator arguments after the path. */
  options: Code[];
  name: string;
  params: Code[];
  returns: Code;
  body: Statement[];
}

/** A module-level constant of a route module, and the imported names its value uses. */
interface ModuleConstant {
  name: string;
  value: PyExpr;
  uses: readonly PyName[];
}

/** A route module (app/routes/<module>.py) as data, rendered by renderRouteModule. */
export interface RouteModuleModel {
  docstring: string;
  prefix: string;
  tag: string;
  /** Role dependency lists by constant name (`ADMIN_OR_AGENT` -> admin, agent). */
  roleSets: ReadonlyMap<string, readonly string[]>;
  constants: ModuleConstant[];
  handlers: HandlerModel[];
}

/** The names of one entity's module that its handlers use. */
interface EntityNames {
  repo: PyName;
  /** The entity's hooks (app/hooks.py), imported as HOOKS. */
  hooks: PyName;
  /** The entity's metadata (app/domain.py), imported as META. */
  meta: PyName;
  create: PyName;
  filters: PyName;
  list: PyName;
  public: PyName;
  update: PyName;
  /** The entity's state machine (app/workflows.py), imported as WORKFLOW. */
  workflow: PyName | undefined;
}

/** What the handler builders share while one module is built. */
interface RouteContext {
  ir: DomainIR;
  route: RouteIR;
  entity: EntityIR;
  /** What the compiler decided the entity's API serves: the handlers' methods and paths. */
  api: EntityApiIR;
  module: string;
  names: EntityNames;
  label: string;
  tag: string;
  workflow: WorkflowIR | undefined;
  roleSets: Map<string, readonly string[]>;
  constants: ModuleConstant[];
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

/** Adds a module constant (its value naming no import unless `uses` says so) and returns its name. */
function constant(ctx: RouteContext, name: string, value: PyExpr, uses: readonly PyName[] = []): string {
  ctx.constants.push({ name, value, uses });
  return name;
}

/**
 * operation_id, summary, the failure statuses declared in the document (statuses.ts) and (with
 * auth) the role check every handler's decorator carries.
 */
function commonOptions(ctx: RouteContext, op: Operation, fallback: string): Code[] {
  const e = endpoint(ctx, op);
  const out = [plain(`operation_id=${pyStr(`${ctx.tag}-${op}`)}`), plain(`summary=${pyStr(e?.summary || fallback)}`)];
  const statuses = operationStatuses({ ir: ctx.ir, op, endpoint: e, workflow: ctx.workflow });
  out.push(py`responses=${N.error_responses}(${statuses.join(", ")})`);
  if (ctx.ir.auth !== null && e) {
    const roles = [...e.roles].sort();
    const name = rolesConstant(roles);
    ctx.roleSets.set(name, roles);
    out.push(plain(`dependencies=${name}`));
  }
  return out;
}

/**
 * The validation rules of a write operation as its document tells them: every rule in
 * `x-validation-rules`, and the ones the request schema cannot express (a rule relating fields)
 * in the description too, as the only reason a schema-valid request may be refused. Defines the
 * `openapi_extra` constant and returns its name; null when the operation has no rules.
 */
function rulesDoc(ctx: RouteContext, op: "create" | "update", name: string): string | null {
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
  return constant(
    ctx,
    name,
    exploded(
      dict([
        [pyStr("description"), str(description)],
        [pyStr("x-validation-rules"), { kind: "list", items: compiled.rules.map(rule) }],
      ]),
    ),
  );
}

/** A tuple of compiled validation rules, as a constant of the module (it names Rule, maybe app.expr). */
function rulesConstant(
  ctx: RouteContext,
  name: string,
  rules: readonly ValidationRuleIR[],
  value: PyExpr = rulesTuple([...rules]),
): string {
  return constant(ctx, name, value, [N.Rule, ...(rules.some((r) => usesExprModule(r.expr)) ? [N.expr] : [])]);
}

/** The `openapi_extra` option naming a document constant, if there is one. */
const openapiExtra = (name: string | null): Code[] => (name ? [plain(`openapi_extra=${name}`)] : []);

/**
 * The caller in a handler, and the parameter that brings the caller. Without an auth contract
 * every request is the anonymous administrator: the handlers name it directly rather than have
 * FastAPI solve a dependency per request to hand over a constant.
 */
const caller = (ctx: RouteContext): Code => (ctx.ir.auth === null ? py`${N.ANONYMOUS}` : plain("user"));
const callerId = (ctx: RouteContext): Code => py`${caller(ctx)}.id`;
const callerParam = (ctx: RouteContext): Code[] => (ctx.ir.auth === null ? [] : [py`user: ${N.CurrentUser}`]);

/** The handler's repository, a dependency (app/deps.py) that `app.dependency_overrides` can swap. */
const repoParam = (ctx: RouteContext): Code => py`repo: ${ctx.names.repo}`;

/**
 * A call of the entity's hook (app/hooks.py: the user's function of app/custom/hooks/<entity>.py,
 * or one that does nothing; see docs/customizing.md): every hook takes its subject, then the caller.
 */
const hook = (ctx: RouteContext, name: HookName, subject: Code | string): Statement =>
  stmt(py`await ${ctx.names.hooks}.${name}(${typeof subject === "string" ? plain(subject) : subject}, ${caller(ctx)})`);

/**
 * An after-hook given the stored record as the API returns it, a validated public model: built only
 * when the user defined the hook, since validating the record for a hook that does nothing would
 * be a fiftieth of what a create costs.
 */
const afterHook = (ctx: RouteContext, name: HookName): Statement =>
  stmt(py`if ${ctx.names.hooks}.${name} is not ${N.nothing}:`, [
    hook(ctx, name, py`${ctx.names.public}.model_validate(${N.with_links}(record, LINKS))`),
  ]);
const notFound = (ctx: RouteContext): Statement => stmt(py`raise ${N.not_found}(${pyStr(ctx.entity.name)}, record_id)`);
const ifNone = (ctx: RouteContext): Statement => stmt(plain("if record is None:"), [notFound(ctx)]);
const recordId = py`record_id: ${N.UUID}`;

/** Why the handlers return a Response and still declare a response_model, said once per module. */
const RESPONSES_NOTE = [
  "# The handlers answer with a Response of the body they built (orjson-rendered dicts): FastAPI then",
  "# skips its response-model pass (validate the answer, serialise it again), the costliest step of a",
  "# small request. Each still declares its response_model: the answer the OpenAPI document shows, and",
  "# what CheckedRoute (app/responses.py) checks every answer against while RESPONSE_VALIDATION is on.",
];

function listHandler(ctx: RouteContext): HandlerModel {
  return {
    ...served(ctx, "list"),
    options: [
      py`response_model=${ctx.names.list}`,
      ...commonOptions(ctx, "list", `List ${ctx.entity.labelPlural.toLowerCase()}`),
      py`openapi_extra=${N.query_parameters}(${ctx.names.filters})`,
    ],
    name: `list_${ctx.module}`,
    // The query is validated in one pass by the Filters model (records.parse_query), not by FastAPI.
    params: [py`request: ${N.Request}`, repoParam(ctx)],
    returns: py`${N.ORJSONResponse}`,
    body: [
      stmt(py`page = await repo.list(${N.list_query}(repo.meta, ${N.parse_query}(${ctx.names.filters}, request)))`),
      stmt(py`return ${N.ORJSONResponse}(${N.page_body}(page, LINKS))`),
    ],
  };
}

function getHandler(ctx: RouteContext): HandlerModel {
  return {
    ...served(ctx, "get"),
    options: [py`response_model=${ctx.names.public}`, ...commonOptions(ctx, "get", `Get a ${ctx.label}`)],
    name: `get_${ctx.entity.name}`,
    params: [recordId, repoParam(ctx)],
    returns: py`${N.ORJSONResponse}`,
    body: [
      stmt(plain("record = await repo.get(record_id)")),
      ifNone(ctx),
      stmt(py`return ${N.ORJSONResponse}(${N.with_links}(record, LINKS))`),
    ],
  };
}

function createHandler(ctx: RouteContext): HandlerModel {
  const create = endpoint(ctx, "create");
  const rules = create?.validation ?? [];
  constant(ctx, "CREATE_FILL", fillDict(createFill(ctx.entity, create)));
  if (rules.length) rulesConstant(ctx, "CREATE_RULES", rules);
  const events = pyStrTuple(eventsTuple(create));
  const replayedHook = hook(ctx, "after_create", py`${ctx.names.public}.model_validate_json(bytes(response.body))`);
  return {
    ...served(ctx, "create"),
    options: [
      py`response_model=${ctx.names.public}`,
      plain("status_code=201"),
      ...commonOptions(ctx, "create", `Create a ${ctx.label}`),
      // The Idempotency-Key header is declared here and read by the handler (app/idempotency.py).
      py`openapi_extra=${N.with_idempotency_key}(${rulesDoc(ctx, "create", "CREATE_RULES_DOC") ?? ""})`,
    ],
    name: `create_${ctx.entity.name}`,
    params: [py`body: ${ctx.names.create}`, py`request: ${N.Request}`, repoParam(ctx), ...callerParam(ctx)],
    returns: py`${N.Response}`,
    body: [
      stmt(plain("values = body.model_dump(by_alias=True)")),
      ...(rules.length ? [stmt(py`${N.enforce}(CREATE_RULES, values)`)] : []),
      stmt(py`${N.fill}(values, CREATE_FILL, ${callerId(ctx)})`),
      ...(ctx.names.workflow ? [stmt(py`values["state"] = ${ctx.names.workflow}.initial`)] : []),
      hook(ctx, "before_create", "body"),
      stmt(py`key = ${N.idempotency_key}(request)`),
      stmt(plain("if key is not None:"), [
        stmt(py`response = await ${N.create_once}(repo, key, ${callerId(ctx)}, body, values, ${events}, LINKS)`),
        // A replayed response created nothing: the hook ran when the first request did.
        stmt(plain(`if response.status_code == 201 and "idempotent-replayed" not in response.headers:`), [replayedHook]),
        stmt(plain("return response")),
      ]),
      stmt(plain(`record = await repo.create(values, events=${events})`)),
      afterHook(ctx, "after_create"),
      stmt(py`return ${N.ORJSONResponse}(${N.with_links}(record, LINKS), status_code=201)`),
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
  return rulesConstant(ctx, "UPDATE_RULES", own, tuple(createRules.length ? ["*CREATE_RULES", ...items] : items));
}

function updateHandler(ctx: RouteContext): HandlerModel {
  const update = endpoint(ctx, "update");
  constant(ctx, "UPDATE_FILL", fillDict(updateFill(ctx.entity, update)));
  const rules = updateRules(ctx, update);
  const events = pyStrTuple(eventsTuple(update));
  return {
    ...served(ctx, "update"),
    options: [
      py`response_model=${ctx.names.public}`,
      ...commonOptions(ctx, "update", `Update a ${ctx.label}`),
      ...openapiExtra(rulesDoc(ctx, "update", "UPDATE_RULES_DOC")),
    ],
    name: `update_${ctx.entity.name}`,
    params: [recordId, py`body: ${ctx.names.update}`, repoParam(ctx), ...callerParam(ctx)],
    returns: py`${N.ORJSONResponse}`,
    body: [
      stmt(plain("changes = body.model_dump(by_alias=True, exclude_unset=True)")),
      stmt(py`${N.check_changes}(${ctx.names.meta}, changes)`),
      hook(ctx, "before_update", "record_id, body"),
      stmt(py`${N.fill}(changes, UPDATE_FILL, ${callerId(ctx)})`),
      // The rules see the record as the change leaves it, read under the write's lock (modify).
      stmt(
        rules
          ? py`record = await repo.modify(record_id, ${N.checked}(${rules}, changes, events=${events}))`
          : plain(`record = await repo.update(record_id, changes, events=${events})`),
      ),
      ifNone(ctx),
      afterHook(ctx, "after_update"),
      stmt(py`return ${N.ORJSONResponse}(${N.with_links}(record, LINKS))`),
    ],
  };
}

function deleteHandler(ctx: RouteContext): HandlerModel {
  const events = pyStrTuple(eventsTuple(endpoint(ctx, "delete")));
  return {
    ...served(ctx, "delete"),
    options: [plain("status_code=204"), ...commonOptions(ctx, "delete", `Delete a ${ctx.label}`)],
    name: `delete_${ctx.entity.name}`,
    params: [recordId, repoParam(ctx), ...callerParam(ctx)],
    returns: py`${N.Response}`,
    body: [
      hook(ctx, "before_delete", "record_id"),
      stmt(py`if not await repo.delete(record_id, ${callerId(ctx)}, events=${events}):`, [notFound(ctx)]),
      hook(ctx, "after_delete", "record_id"),
      stmt(py`return ${N.Response}(status_code=204)`),
    ],
  };
}

/**
 * PUT {base}/{id}/state: only for an entity with a state machine and a transition endpoint. The
 * move is decided (allowed target, guard, effects) on the record as the write holds it, so a
 * concurrent update cannot break the guard between the check and the change of state.
 */
function transitionHandler(ctx: RouteContext, move: EndpointIR, workflow: PyName): HandlerModel {
  constant(ctx, "STATE_FILL", fillDict(updateFill(ctx.entity, move)));
  return {
    ...served(ctx, "transition"),
    options: [py`response_model=${ctx.names.public}`, ...commonOptions(ctx, "transition", `Move a ${ctx.label} to another state`)],
    name: `move_${ctx.entity.name}`,
    params: [recordId, py`body: ${N.StateChange}`, repoParam(ctx), ...callerParam(ctx)],
    returns: py`${N.ORJSONResponse}`,
    body: [
      stmt(py`changes: dict[str, ${N.Any}] = {}`),
      stmt(py`${N.fill}(changes, STATE_FILL, ${callerId(ctx)})`),
      hook(ctx, "before_transition", "record_id, body.state"),
      stmt(py`move = ${workflow}.move(body.state, changes, events=${pyStrTuple(eventsTuple(move))})`),
      stmt(plain("record = await repo.modify(record_id, move)")),
      ifNone(ctx),
      afterHook(ctx, "after_transition"),
      stmt(py`return ${N.ORJSONResponse}(${N.with_links}(record, LINKS))`),
    ],
  };
}

/**
 * The entity's names the handlers use. The metadata, hooks and workflow under fixed names: an
 * entity or workflow named like one of the module's own names (`links`, a role's `USER`) would
 * otherwise shadow it.
 */
function entityNames(entity: EntityIR, workflow: WorkflowIR | undefined): EntityNames {
  const models = `app.models.${pyModuleName(entity.name)}`;
  return {
    repo: pyName("app.deps", repositoryAlias(entity.className)),
    hooks: pyName("app.hooks", hooksConstant(entity.name), "HOOKS"),
    meta: pyName("app.domain", metaConstant(entity.name), "META"),
    create: pyName(models, `${entity.className}Create`),
    filters: pyName(models, `${entity.className}Filters`),
    list: pyName(models, `${entity.className}List`),
    public: pyName(models, `${entity.className}Public`),
    update: pyName(models, `${entity.className}Update`),
    workflow: workflow ? pyName("app.workflows", constantName(workflow.name), "WORKFLOW") : undefined,
  };
}

/** The model of app/routes/<module>.py for one Route contract. */
export function buildRouteModule(ir: DomainIR, route: RouteIR, entity: EntityIR, module: string): RouteModuleModel {
  const api = entity.api;
  if (!api || api.route !== route.fqn)
    throw new Error(`${route.fqn} does not serve ${entity.fqn} (the compiler chose ${api?.route ?? "none"})`);
  const links = route.endpoints.find((e) => e.operation === "get")?.hateoas ?? { self: `${api.basePath}/{id}` };
  const workflow = ir.workflows.find((w) => w.fqn === entity.stateMachine);
  const ctx: RouteContext = {
    ir,
    route,
    entity,
    api,
    module,
    names: entityNames(entity, workflow),
    label: entity.label.toLowerCase(),
    tag: api.basePath.replace(/^\//, "") || module,
    workflow,
    roleSets: new Map(),
    constants: [{ name: "LINKS", value: pyValue(links), uses: [] }],
  };
  const move = endpoint(ctx, "transition");
  const handlers = [listHandler(ctx), getHandler(ctx), createHandler(ctx), updateHandler(ctx), deleteHandler(ctx)];
  if (ctx.names.workflow && move) handlers.push(transitionHandler(ctx, move, ctx.names.workflow));
  return {
    docstring: pyDocstring(`${humanList(entity.labelPlural)} API (${route.fqn}).`, route.description ? `${route.description}.` : ""),
    prefix: api.basePath,
    tag: ctx.tag,
    roleSets: ctx.roleSets,
    constants: ctx.constants,
    handlers,
  };
}

/** The decorator of a handler, its signature and its body. */
function renderHandler(h: HandlerModel): string {
  return [
    pyCall(`@router.${h.method}`, [pyStr(h.path), ...h.options.map((o) => o.text)]),
    pyAsyncDef(
      h.name,
      h.params.map((p) => p.text),
      h.returns.text,
    ),
    ...renderStatements(h.body),
  ].join("\n");
}

/** Every name a handler uses: in its decorator, its signature and its body. */
const handlerUses = (h: HandlerModel): PyName[] =>
  [...h.options, ...h.params, h.returns].flatMap((c) => c.uses).concat(statementUses(h.body));

/** `ADMIN_OR_AGENT = role_dependencies("admin", "agent")` lines of a module's role sets, by name. */
export function renderRoleConstants(roleSets: ReadonlyMap<string, readonly string[]>): string[] {
  return [...roleSets.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([name, roles]) => `${name} = role_dependencies(${roles.map(pyStr).join(", ")})`);
}

/** The router of a route module. CheckedRoute: answers validated against their response models while RESPONSE_VALIDATION is on. */
function routerCode(m: RouteModuleModel): Code {
  const args = [kw("prefix", pyStr(m.prefix)), kw("tags", `[${pyStr(m.tag)}]`), kw("route_class", localName(N.CheckedRoute))];
  return { text: assign("router", call(localName(N.APIRouter), args)), uses: [N.APIRouter, N.CheckedRoute] };
}

/** The text of a route module; its imports are the names its code uses. */
export function renderRouteModule(m: RouteModuleModel): string {
  const roleConstants = renderRoleConstants(m.roleSets);
  const router = routerCode(m);
  const uses = [
    ...router.uses,
    ...(roleConstants.length ? [N.role_dependencies] : []),
    ...m.constants.flatMap((c) => c.uses),
    ...m.handlers.flatMap(handlerUses),
  ];
  return [
    hashHeader(),
    m.docstring,
    "",
    importsOf(uses).render(),
    "",
    ...RESPONSES_NOTE,
    router.text,
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
