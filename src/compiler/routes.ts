import { expressionNames } from "../contracts/expression.js";
import type { Endpoint } from "../contracts/spec-types.generated.js";
import type { Contract, Reporter } from "./context.js";
import { parseComputed } from "./fields.js";
import type { ComputedIR, EndpointIR, EntityIR, Operation, RouteIR, RouteSideEffectIR, ServedOperationIR, ValidationRuleIR } from "./ir.js";
import { parseChecked } from "./workflows.js";

const OPERATIONS: Operation[] = ["list", "get", "create", "update", "delete", "transition"];

const DEFAULTS: Record<
  Operation,
  { method: EndpointIR["method"]; rel: string; status: number; shape: EndpointIR["response"]["shape"]; summary: string }
> = {
  list: { method: "GET", rel: "", status: 200, shape: "list", summary: "List" },
  get: { method: "GET", rel: "/{id}", status: 200, shape: "entity", summary: "Get" },
  create: { method: "POST", rel: "", status: 201, shape: "entity", summary: "Create" },
  update: { method: "PATCH", rel: "/{id}", status: 200, shape: "entity", summary: "Update" },
  delete: { method: "DELETE", rel: "/{id}", status: 204, shape: "empty", summary: "Delete" },
  transition: { method: "PUT", rel: "/{id}/state", status: 200, shape: "entity", summary: "Change the state of" },
};

/**
 * Paths the generated backend serves itself (health, metrics, sign-in, the API documents, static
 * files, the Healer's hooks). A Route at one of them, or below one, would be shadowed by the app or
 * shadow it, so it is a compile error rather than a silent clash.
 */
export const RESERVED_BASE_PATHS: readonly string[] = [
  "/auth",
  "/docs",
  "/health",
  "/healer",
  "/metrics",
  "/openapi.json",
  "/redoc",
  "/static",
];

/** The reserved path `basePath` is or lies below (`/` clashes with all of them); null when free. */
export function reservedBasePath(basePath: string): string | null {
  if (basePath === "/") return "/";
  const lower = basePath.toLowerCase();
  return RESERVED_BASE_PATHS.find((r) => lower === r || lower.startsWith(`${r}/`)) ?? null;
}

/**
 * The operations a Route serves at `basePath`: every standard one (the transition only with a
 * workflow), each at the method and path the backend answers on, whatever method a declared
 * endpoint wrote (`PUT /{id}` for an update is served as PATCH).
 */
export function servedOperations(basePath: string, stateMachine: boolean): ServedOperationIR[] {
  return OPERATIONS.filter((op) => op !== "transition" || stateMachine).map((op) => {
    const d = DEFAULTS[op];
    return { operation: op, method: d.method, path: `${basePath}${d.rel}` };
  });
}

/** Maps a declared endpoint to one of the standard operations, or null when it matches none. */
export function classifyEndpoint(method: string, path: string, basePath: string): Operation | null {
  let rel = path;
  if (path === basePath) rel = "";
  else if (path.startsWith(`${basePath}/`)) rel = path.slice(basePath.length);
  rel = rel.replace(/\/+$/, "").replace(/\{[a-z_]*id\}/g, "{id}");
  if (rel === "") return method === "GET" ? "list" : method === "POST" ? "create" : null;
  if (rel === "/{id}") {
    if (method === "GET") return "get";
    if (method === "PATCH" || method === "PUT") return "update";
    if (method === "DELETE") return "delete";
    return null;
  }
  if (rel === "/{id}/state" && (method === "PUT" || method === "POST" || method === "PATCH")) return "transition";
  return null;
}

export function routeBasePath(c: Contract<"Route">, entity: EntityIR | undefined): string {
  return c.spec.base_path !== undefined ? c.spec.base_path.replace(/\/+$/, "") || "/" : (entity?.basePath ?? `/${c.name}`);
}

/** Builds a Route: the standard endpoints of its entity, with the declared ones' rules folded in. */
export function buildRoute(reporter: Reporter, c: Contract<"Route">, entity: EntityIR | undefined): RouteIR {
  const spec = c.spec;
  const basePath = routeBasePath(c, entity);
  const global = spec.global_behaviors ?? {};
  const globalRoles = global.roles ?? [];
  const fieldNames = entity ? entity.fields.map((f) => f.name) : [];
  const checkField = (path: (string | number)[], name: string): void => {
    if (entity && !fieldNames.includes(name)) reporter.notOneOf(c, path, name, fieldNames, "field");
  };
  const declared = new Map<Operation, EndpointIR>();
  spec.endpoints.forEach((e, i) => {
    const { method, path } = e;
    const at: EndpointPlace = (...rest) => ["spec", "endpoints", i, ...rest];
    const op = classifyEndpoint(method, path, basePath);
    if (!op) {
      reporter.report(
        c,
        at("path"),
        "route.unknown_endpoint",
        `${method} ${path} is not one of the standard endpoints of ${basePath} (list, get, create, update, delete, state)`,
      );
      return;
    }
    if (op === "transition" && entity && !entity.stateMachine) {
      reporter.report(c, at("path"), "route.no_state_machine", `${method} ${path} needs an entity with a state_machine`);
      return;
    }
    if (declared.has(op)) {
      reporter.report(c, at(), "route.duplicate_endpoint", `a second ${op} endpoint for ${basePath}`);
      return;
    }
    const requestBody = endpointRequestBody(e, at, checkField);
    const validation = endpointValidation(reporter, c, e, at, checkField);
    const autoFields: Record<string, ComputedIR> = {};
    for (const [field, gen] of Object.entries(e.auto_fields ?? {})) {
      checkField(at("auto_fields", field), field);
      autoFields[field] = parseComputed(gen, entity?.name ?? c.name, entity?.numberPrefix ?? null);
    }
    const sideEffects: RouteSideEffectIR[] = (e.side_effects ?? []).map((s) =>
      "emit_event" in s ? { emitEvent: s.emit_event } : { invoke: s.invoke },
    );
    const response = e.response ?? {};
    const d = DEFAULTS[op];
    const hateoas: Record<string, string> = { self: `${basePath}/{id}` };
    for (const [k, v] of Object.entries(e.hateoas ?? {})) hateoas[k] = v;
    declared.set(op, {
      operation: op,
      method,
      path,
      summary: e.summary ?? `${d.summary} ${entity?.label.toLowerCase() ?? c.name}`,
      description: e.description ?? "",
      roles: e.roles ?? globalRoles,
      requestBody,
      validation,
      autoFields,
      sideEffects,
      response: { status: response.status ?? d.status, shape: response.shape ?? d.shape },
      hateoas,
      declared: true,
    });
  });
  const ops = OPERATIONS.filter((op) => op !== "transition" || Boolean(entity?.stateMachine));
  const full: EndpointIR[] = ops.map((op) => {
    return declared.get(op) ?? defaultEndpoint(c, op, basePath, entity, globalRoles);
  });
  return {
    fqn: c.fqn,
    name: c.name,
    domain: c.domain,
    file: c.loaded.file,
    description: c.meta.description ?? "",
    entity: spec.entity,
    entityName: entity?.name ?? spec.entity.split("/")[2] ?? "",
    basePath,
    roles: globalRoles,
    globalBehaviors: global,
    endpoints: full,
  };
}

/** Where in a route contract an endpoint's parts are: `at("path")` is its path's place. */
type EndpointPlace = (...rest: (string | number)[]) => (string | number)[];

/** An endpoint's declared request body, each named field checked to exist on the entity. */
function endpointRequestBody(
  e: Endpoint,
  at: EndpointPlace,
  checkField: (path: (string | number)[], name: string) => void,
): EndpointIR["requestBody"] {
  const body = e.request_body;
  const requestBody =
    body === undefined ? null : { requiredFields: body.required_fields ?? [], optionalFields: body.optional_fields ?? [] };
  requestBody?.requiredFields.forEach((f, j) => checkField(at("request_body", "required_fields", j), f));
  requestBody?.optionalFields.forEach((f, j) => checkField(at("request_body", "optional_fields", j), f));
  return requestBody;
}

/** An endpoint's validation rules, parsed; a rule that does not parse is reported and left out. */
function endpointValidation(
  reporter: Reporter,
  c: Contract<"Route">,
  e: Endpoint,
  at: EndpointPlace,
  checkField: (path: (string | number)[], name: string) => void,
): ValidationRuleIR[] {
  const validation: ValidationRuleIR[] = [];
  (e.validation ?? []).forEach((rule, j) => {
    const source = rule.rule;
    const expr = parseChecked(reporter, c, at("validation", j, "rule"), source);
    if (!expr) return;
    for (const n of expressionNames(expr)) checkField(at("validation", j, "rule"), n);
    const onFail = rule.on_fail;
    validation.push({
      source,
      expr,
      onFail: { status: onFail.status, error: onFail.error, message: onFail.message ?? null },
    });
  });
  return validation;
}

/** The endpoint a route serves without declaring it: the standard one for the operation. */
function defaultEndpoint(
  c: Contract<"Route">,
  op: Operation,
  basePath: string,
  entity: EntityIR | undefined,
  globalRoles: string[],
): EndpointIR {
  const d = DEFAULTS[op];
  return {
    operation: op,
    method: d.method,
    path: `${basePath}${d.rel}`,
    summary: `${d.summary} ${op === "list" ? (entity?.labelPlural.toLowerCase() ?? c.name) : (entity?.label.toLowerCase() ?? c.name)}`,
    description: "",
    roles: globalRoles,
    requestBody: null,
    validation: [],
    autoFields: {},
    sideEffects: [],
    response: { status: d.status, shape: d.shape },
    hateoas: { self: `${basePath}/{id}` },
    declared: false,
  };
}

/** Endpoint roles must be roles of the auth contract, when there is one. */
export function checkRouteRoles(reporter: Reporter, c: Contract<"Route">, roles: readonly string[]): void {
  const check = (path: (string | number)[], list: readonly string[] | undefined): void => {
    list?.forEach((r, i) => {
      if (!roles.includes(r)) reporter.notOneOf(c, [...path, i], r, roles, "role");
    });
  };
  check(["spec", "global_behaviors", "roles"], c.spec.global_behaviors?.roles);
  c.spec.endpoints.forEach((e, i) => {
    check(["spec", "endpoints", i, "roles"], e.roles);
  });
}
