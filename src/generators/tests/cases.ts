import type { AuthIR, DomainIR, EndpointIR, EntityIR, FieldIR, Operation, RouteIR, WorkflowIR } from "../../compiler/index.js";
import type { Expr } from "../../contracts/expression.js";
import { compareText } from "../../shared/text.js";
import { fieldAccepts, force, holds, sampleValue, type Values } from "./solve.js";

/**
 * The data of the generated black-box suite (tests/cases.json): what to send and what to expect,
 * worked out from the IR at generation time so the Python tests stay small and generic. Reference
 * fields hold `{"$ref": "<entity>"}`; the suite creates that record first and puts in its id.
 */
export interface SuiteCases {
  domain: string;
  auth: { users: AuthUserCase[]; loginPath: string } | null;
  entities: Record<string, EntityCase>;
  routes: RouteCase[];
  rules: RuleCase[];
  transitions: TransitionCase[];
  access: AccessCase[];
  deletes: DeleteCase[];
  /** What could not be turned into a test, with the reason (printed by the suite, never silent). */
  uncovered: string[];
}

export interface AuthUserCase {
  id: string;
  email: string;
  role: string;
  password: string;
}

export interface EntityCase {
  path: string;
  payload: Values;
  /** Fields whose value the response must echo exactly. */
  echoed: string[];
  /** A plain string field the suite stamps with a per-run marker to filter its own records. */
  marker: string | null;
  /** One field and a new value for the update test. */
  update: Values | null;
  stateMachine: boolean;
  initialState: string | null;
  required: string[];
}

export interface RouteCase {
  id: string;
  entity: string;
  /** User (bootstrap id) to act as per operation; null when auth is off or no user may call it. */
  as: Partial<Record<Operation, string | null>>;
}

export interface RuleCase {
  id: string;
  entity: string;
  operation: "create" | "update";
  as: string | null;
  /** For create: overrides of the entity payload; for update: the PATCH body. */
  body: Values;
  status: number;
  error: string;
}

export interface TransitionCase {
  id: string;
  entity: string;
  as: string | null;
  /** Overrides of the create payload that let every guard on the way hold (or fail, for guard cases). */
  setup: Values;
  /** States to move through from the initial one before the move under test. */
  path: string[];
  target: string;
  status: number;
  error: string | null;
}

export interface AccessCase {
  id: string;
  entity: string;
  operation: Operation;
  /** Bootstrap user id, or null for no token at all. */
  as: string | null;
  status: 401 | 403;
}

/** Deleting a referenced record, and what its `on_delete` makes of the record that references it. */
export interface DeleteCase {
  id: string;
  /** The referencing entity and its reference field. */
  entity: string;
  field: string;
  /** The referenced entity, deleted in the test. */
  target: string;
  onDelete: "restrict" | "cascade" | "set_null";
}

const OPERATIONS: Operation[] = ["list", "get", "create", "update", "delete", "transition"];

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => compareText(a, b)));
}

/** What the cases of one workflow share: its fields, the baseline record, the create rules, where cases go. */
interface WorkflowScope {
  wf: WorkflowIR;
  fields: Map<string, FieldIR>;
  baseline: Values;
  rules: { expr: Expr }[];
  push: (c: Omit<TransitionCase, "entity" | "as">) => void;
}

/** The base workflow (label "") or one type-override value of it, with the transitions it allows. */
interface WorkflowVariant {
  label: string;
  setup: Values;
  transitions: Record<string, string[]>;
}

/** The user to act as on an endpoint: the first bootstrap user (contract order) whose role may call it. */
function actor(auth: AuthIR | null, ep: EndpointIR | undefined): string | null {
  if (!auth || !ep) return null;
  const user = auth.users.find((u) => u.password !== null && (ep.roles.length === 0 || ep.roles.includes(u.role)));
  return user?.id ?? null;
}

class CaseBuilder {
  readonly cases: SuiteCases;
  private readonly entityByFqn: Map<string, EntityIR>;
  private readonly routeByEntity: Map<string, RouteIR>;

  constructor(private readonly ir: DomainIR) {
    this.entityByFqn = new Map(ir.entities.map((e) => [e.fqn, e]));
    this.routeByEntity = new Map(ir.routes.map((r) => [r.entity, r]));
    const users = (ir.auth?.users ?? []).flatMap((u) =>
      u.password === null ? [] : [{ id: u.id, email: u.email, role: u.role, password: u.password }],
    );
    this.cases = {
      domain: ir.domain,
      auth: ir.auth && ir.auth.provider === "jwt" ? { users, loginPath: "/auth/login" } : null,
      entities: {},
      routes: [],
      rules: [],
      transitions: [],
      access: [],
      deletes: [],
      uncovered: [],
    };
  }

  build(): SuiteCases {
    const routes = [...this.ir.routes].sort((a, b) => compareText(a.fqn, b.fqn));
    for (const route of routes) {
      const entity = this.entityByFqn.get(route.entity);
      if (!entity) continue;
      const ec = this.entityCaseOnce(entity, route);
      if (!ec) continue;
      this.cases.entities[entity.name] = ec;
    }
    for (const route of routes) {
      const entity = this.entityByFqn.get(route.entity);
      if (!entity || !this.cases.entities[entity.name]) continue;
      this.routeCases(entity, route);
    }
    for (const route of routes) {
      const entity = this.entityByFqn.get(route.entity);
      if (entity && this.cases.entities[entity.name]) this.deleteCases(entity, route);
    }
    for (const wf of [...this.ir.workflows].sort((a, b) => compareText(a.fqn, b.fqn))) {
      for (const fqn of wf.entities) {
        const entity = this.entityByFqn.get(fqn);
        if (entity && this.cases.entities[entity.name]) this.workflowCases(entity, wf);
      }
    }
    this.cases.entities = sortKeys(this.cases.entities);
    return this.cases;
  }

  private fields(entity: EntityIR): Map<string, FieldIR> {
    return new Map(entity.fields.map((f) => [f.name, f]));
  }

  /** Entity cases by route, computed once: a reference asks for its target's case too. */
  private readonly entityCases = new Map<string, EntityCase | null | "pending">();

  private entityCaseOnce(entity: EntityIR, route: RouteIR): EntityCase | null {
    const key = `${route.fqn}\u0000${entity.fqn}`;
    const known = this.entityCases.get(key);
    // A cycle of references: the record on the way round cannot be made first.
    if (known === "pending") return null;
    if (known !== undefined) return known;
    this.entityCases.set(key, "pending");
    const ec = this.entityCase(entity, route);
    this.entityCases.set(key, ec);
    return ec;
  }

  /**
   * Whether the suite can make a record of `target` to reference: it needs a Route and a create
   * payload of its own (DigitalOcean's sink references a destination that itself needs a record
   * of an entity without a Route; the sink's payload pointed at a destination never made).
   */
  private creatable(target: EntityIR, from: EntityIR): boolean {
    if (target.fqn === from.fqn) return false;
    const route = this.routeByEntity.get(target.fqn);
    return route !== undefined && this.entityCaseOnce(target, route) !== null;
  }

  /** A create payload every create rule accepts, or null (reported) when none is found. */
  private entityCase(entity: EntityIR, route: RouteIR): EntityCase | null {
    const fields = this.fields(entity);
    const payload: Values = {};
    for (const f of entity.fields) {
      if (!f.writable) continue;
      if (f.references) {
        const target = this.entityByFqn.get(f.references.entity);
        if (target && this.creatable(target, entity)) payload[f.name] = { $ref: target.name };
        else if (f.required) {
          const why = target && this.routeByEntity.has(target.fqn) ? "the suite cannot create" : "without a Route";
          this.cases.uncovered.push(`${entity.name}: required reference ${f.name} to an entity ${why}`);
          return null;
        }
        continue;
      }
      const value = f.hasDefault && fieldAccepts(f, f.default) && f.default !== null ? f.default : sampleValue(f);
      if (value === null || !fieldAccepts(f, value)) {
        if (f.required) {
          this.cases.uncovered.push(`${entity.name}: no valid sample value for required field ${f.name}`);
          return null;
        }
        continue;
      }
      payload[f.name] = value;
    }
    const create = route.endpoints.find((e) => e.operation === "create");
    for (const rule of create?.validation ?? []) {
      const fix = force(rule.expr, true, this.asRecord(entity, payload), fields);
      if (fix === null) {
        this.cases.uncovered.push(`${entity.name}: no payload satisfies the create rule ${JSON.stringify(rule.source)}`);
        return null;
      }
      Object.assign(payload, fix);
    }
    if (create && !create.validation.every((r) => holds(r.expr, this.asRecord(entity, payload)))) {
      this.cases.uncovered.push(`${entity.name}: no payload satisfies every create rule together`);
      return null;
    }
    const echoed = Object.keys(payload).filter((k) => {
      const f = fields.get(k);
      return f && !f.references && ["string", "text", "integer", "boolean", "email"].includes(f.type);
    });
    const marker =
      entity.fields.find(
        (f) =>
          f.writable &&
          f.type === "string" &&
          !f.enum &&
          !f.format &&
          !f.constraints.pattern &&
          !f.references &&
          (f.constraints.maxLength ?? 64) >= 40,
      )?.name ?? null;
    const wf = entity.stateMachine ? this.ir.workflows.find((w) => w.fqn === entity.stateMachine) : undefined;
    return {
      path: entity.basePath,
      payload: sortKeys(payload),
      echoed: echoed.sort(),
      marker,
      update: this.updateCase(entity, route, payload),
      stateMachine: wf !== undefined,
      initialState: wf?.initial ?? null,
      // What the API refuses to create without: a field with a default is filled in, not required
      // (the create model of app/models follows the same rule).
      required: entity.fields.filter((f) => f.writable && f.required && !(f.hasDefault && f.default !== null)).map((f) => f.name),
    };
  }

  /** The record as the app evaluates create rules on it: the payload over the defaults. */
  private asRecord(entity: EntityIR, payload: Values): Values {
    const record: Values = {};
    for (const f of entity.fields) record[f.name] = f.hasDefault ? f.default : null;
    return { ...record, ...payload };
  }

  /** A change to one updatable plain field that keeps every update rule true. */
  private updateCase(entity: EntityIR, route: RouteIR, payload: Values): Values | null {
    // PATCH enforces the create's rules as well as its own, on the record as the change leaves it.
    const rules = (["create", "update"] as const).flatMap((op) => route.endpoints.find((e) => e.operation === op)?.validation ?? []);
    for (const f of entity.fields) {
      if (!f.updatable || f.references) continue;
      let value: unknown;
      if (f.enum) value = f.enum.find((v) => v !== payload[f.name]);
      else if (f.type === "string" || f.type === "text") value = typeof payload[f.name] === "string" ? `${payload[f.name]} (edited)` : null;
      else if (f.type === "boolean") value = payload[f.name] !== true;
      if (value === undefined || value === null || !fieldAccepts(f, value)) continue;
      const after = { ...this.asRecord(entity, payload), [f.name]: value };
      if (rules.every((r) => holds(r.expr, after))) return { [f.name]: value };
    }
    return null;
  }

  /** One case per reference whose target the suite can create and delete while it reads the referrer back. */
  private deleteCases(entity: EntityIR, route: RouteIR): void {
    const ec = this.cases.entities[entity.name];
    if (!ec || !route.endpoints.some((e) => e.operation === "get")) return;
    for (const f of entity.fields) {
      if (!f.references) continue;
      const ref = ec.payload[f.name];
      const target = this.entityByFqn.get(f.references.entity);
      const targetRoute = target ? this.routeByEntity.get(target.fqn) : undefined;
      if (!target || !targetRoute || typeof ref !== "object" || ref === null) continue;
      // A soft delete is an update: the referencing record never sees it.
      if (target.softDelete || !targetRoute.endpoints.some((e) => e.operation === "delete")) continue;
      this.cases.deletes.push({
        id: `${entity.name}.${f.name} on_delete ${f.references.onDelete}`,
        entity: entity.name,
        field: f.name,
        target: target.name,
        onDelete: f.references.onDelete,
      });
    }
  }

  private routeCases(entity: EntityIR, route: RouteIR): void {
    const auth = this.cases.auth ? this.ir.auth : null;
    const ec = this.cases.entities[entity.name];
    if (!ec) return;
    const as: Partial<Record<Operation, string | null>> = {};
    for (const op of OPERATIONS) {
      const ep = route.endpoints.find((e) => e.operation === op);
      if (ep) as[op] = actor(auth, ep);
    }
    this.cases.routes.push({ id: route.name, entity: entity.name, as });
    const fields = this.fields(entity);
    for (const op of ["create", "update"] as const) {
      const ep = route.endpoints.find((e) => e.operation === op);
      const rules = ep?.validation ?? [];
      rules.forEach((rule, i) => {
        const id = `${route.name} ${op}: ${rule.source}`;
        const base = this.asRecord(entity, ec.payload);
        const broken = force(rule.expr, false, base, fields);
        const after = broken === null ? null : { ...base, ...broken };
        // The app stops at the first failing rule, so every earlier rule must still hold.
        if (broken === null || after === null || !rules.slice(0, i).every((r) => holds(r.expr, after))) {
          this.cases.uncovered.push(`${id}: no request body found that breaks this rule alone`);
          return;
        }
        if (op === "update" && Object.keys(broken).some((k) => !fields.get(k)?.updatable)) {
          this.cases.uncovered.push(`${id}: breaking it needs a field that cannot be updated`);
          return;
        }
        this.cases.rules.push({
          id,
          entity: entity.name,
          operation: op,
          as: actor(auth, ep),
          body: sortKeys(broken),
          status: rule.onFail.status,
          error: rule.onFail.error,
        });
      });
    }
    if (!auth) return;
    for (const op of OPERATIONS) {
      const ep = route.endpoints.find((e) => e.operation === op);
      if (!ep) continue;
      this.cases.access.push({
        id: `${ep.method} ${entity.basePath} (${op}) without a token`,
        entity: entity.name,
        operation: op,
        as: null,
        status: 401,
      });
      const refused = auth.users.find((u) => u.password !== null && ep.roles.length > 0 && !ep.roles.includes(u.role));
      if (refused) {
        this.cases.access.push({
          id: `${ep.method} ${entity.basePath} (${op}) as ${refused.role}`,
          entity: entity.name,
          operation: op,
          as: refused.id,
          status: 403,
        });
      }
    }
  }

  private workflowCases(entity: EntityIR, wf: WorkflowIR): void {
    const route = this.routeByEntity.get(entity.fqn);
    const ep = route?.endpoints.find((e) => e.operation === "transition");
    const ec = this.cases.entities[entity.name];
    if (!ep || !ec) return;
    const as = actor(this.cases.auth ? this.ir.auth : null, ep);
    const fields = this.fields(entity);
    const create = route?.endpoints.find((e) => e.operation === "create");
    const scope: WorkflowScope = {
      wf,
      fields,
      baseline: this.asRecord(entity, ec.payload),
      rules: create?.validation ?? [],
      push: (c) => {
        this.cases.transitions.push({ ...c, entity: entity.name, as });
      },
    };
    const { plain, variants } = this.workflowVariants(wf, fields);
    for (const variant of variants) this.transitionCases(scope, variant);
    this.guardCases(scope, plain, shortestPaths(wf.initial, variants[0]?.transitions ?? wf.transitions));
  }

  /**
   * The base workflow and one variant per type-override value. Records of the base workflow: the
   * type-override field keeps a value that overrides nothing (`plain`).
   */
  private workflowVariants(wf: WorkflowIR, fields: Map<string, FieldIR>): { plain: Values; variants: WorkflowVariant[] } {
    const overrides = wf.typeOverrides;
    const plain: Values = {};
    if (overrides) {
      const f = fields.get(overrides.field);
      const taken = new Set(overrides.overrides.map((o) => o.value));
      const free = f?.enum?.find((v) => !taken.has(String(v)));
      if (free === undefined) this.cases.uncovered.push(`${wf.name}: every value of ${overrides.field} has overrides`);
      else plain[overrides.field] = free;
    }
    const variants: WorkflowVariant[] = [{ label: "", setup: plain, transitions: wf.transitions }];
    for (const o of overrides?.overrides ?? []) {
      variants.push({
        label: ` (${overrides?.field}=${o.value})`,
        setup: { [overrides?.field ?? ""]: o.value },
        transitions: { ...wf.transitions, ...o.transitions },
      });
    }
    return { plain, variants };
  }

  /** From each reachable state of a variant: every allowed move, and one refused move. */
  private transitionCases(s: WorkflowScope, variant: WorkflowVariant): void {
    const { wf } = s;
    const paths = shortestPaths(wf.initial, variant.transitions);
    const sources = variant.label ? Object.keys(overridden(wf, variant.transitions)) : wf.states.map((st) => st.name);
    for (const from of sources) {
      const path = paths.get(from);
      if (!path) {
        this.cases.uncovered.push(`${wf.name}${variant.label}: state ${from} cannot be reached from ${wf.initial}`);
        continue;
      }
      const allowed = variant.transitions[from] ?? [];
      for (const to of allowed) {
        const setup = this.setupFor(wf, s.baseline, variant.setup, [...path, to], s.rules, s.fields);
        if (setup === null) {
          this.cases.uncovered.push(`${wf.name}${variant.label}: no record found that passes the guards on the way to ${from} -> ${to}`);
          continue;
        }
        s.push({
          id: `${wf.name}${variant.label}: ${from} -> ${to} allowed`,
          setup,
          path: path.slice(1),
          target: to,
          status: 200,
          error: null,
        });
      }
      const refused = wf.states.map((st) => st.name).find((st) => st !== from && !allowed.includes(st));
      if (refused) {
        const setup = this.setupFor(wf, s.baseline, variant.setup, path, s.rules, s.fields);
        if (setup !== null) {
          s.push({
            id: `${wf.name}${variant.label}: ${from} -> ${refused} refused`,
            setup,
            path: path.slice(1),
            target: refused,
            status: 400,
            error: "invalid_transition",
          });
        }
      }
    }
  }

  /** Each guard, failing: the record reaches the source state, then the guard's fields are unset or its condition made false. */
  private guardCases(s: WorkflowScope, plain: Values, paths: Map<string, string[]>): void {
    const { wf, baseline, fields } = s;
    for (const guard of wf.guards) {
      const path = paths.get(guard.from);
      const ok = path ? this.setupFor(wf, baseline, plain, path, s.rules, fields) : null;
      if (!path || ok === null) {
        this.cases.uncovered.push(`${wf.name}: guard ${guard.from} -> ${guard.to} cannot be reached`);
        continue;
      }
      const broken: Values[] = guard.requireFields.map((name) => ({ [name]: null }));
      if (guard.condition) {
        const record = { ...baseline, ...ok };
        const b = force(guard.condition.expr, false, record, fields);
        if (b) broken.push(b);
        else this.cases.uncovered.push(`${wf.name}: no record breaks the condition of ${guard.from} -> ${guard.to}`);
      }
      for (const b of broken) {
        const setup = { ...ok, ...b };
        // Breaking a condition may break a create rule (a critical ticket needs a description):
        // repair those with fields the guard does not read.
        const free = new Map([...fields].filter(([name]) => !(name in b)));
        for (const r of s.rules) {
          const fix = force(r.expr, true, { ...baseline, ...setup }, free);
          if (fix) Object.assign(setup, fix);
        }
        const record = { ...baseline, ...setup };
        // The create body must still be valid and the guards on the way must still hold.
        if (!Object.entries(b).every(([k, v]) => fields.get(k) && fieldAccepts(fields.get(k) as FieldIR, v))) continue;
        if (!s.rules.every((r) => holds(r.expr, record)) || !guardsHold(wf, path, record)) {
          this.cases.uncovered.push(`${wf.name}: breaking guard ${guard.from} -> ${guard.to} also breaks the way there`);
          continue;
        }
        const what = Object.keys(b).sort().join(", ");
        s.push({
          id: `${wf.name}: guard ${guard.from} -> ${guard.to} refuses (${what})`,
          setup: sortKeys(setup),
          path: path.slice(1),
          target: guard.to,
          status: 422,
          error: "guard_failed",
        });
      }
    }
  }

  /**
   * Create-payload overrides under which every move of `route` (a list of states from the initial
   * one) passes its guards, found by simulating the moves and fixing the first failing guard.
   */
  private setupFor(
    wf: WorkflowIR,
    baseline: Values,
    start: Values,
    route: string[],
    rules: { expr: Expr }[],
    fields: Map<string, FieldIR>,
  ): Values | null {
    const setup: Values = { ...start };
    for (let attempt = 0; attempt < 8; attempt++) {
      let record: Values = { ...baseline, ...setup };
      let failed = false;
      for (let i = 1; i < route.length; i++) {
        const from = route[i - 1] as string;
        const to = route[i] as string;
        const guard = wf.guards.find((g) => g.from === from && g.to === to);
        if (guard) {
          const fix: Values = {};
          for (const name of guard.requireFields) {
            const f = fields.get(name);
            if (f && !isFilled(record[name])) fix[name] = f.references ? { $ref: f.references.entityName } : sampleValue(f);
          }
          const withFix = { ...record, ...fix };
          if (guard.condition && !holds(guard.condition.expr, withFix)) {
            const c = force(guard.condition.expr, true, withFix, fields);
            if (c === null) return null;
            Object.assign(fix, c);
          }
          if (Object.keys(fix).length > 0) {
            if (Object.keys(fix).some((k) => !fields.get(k)?.writable)) return null;
            Object.assign(setup, fix);
            failed = true;
            break;
          }
        }
        record = applySideEffects(wf, from, to, record);
      }
      if (!failed) {
        const created = { ...baseline, ...setup };
        if (!rules.every((r) => holds(r.expr, created))) {
          for (const r of rules) {
            const fix = force(r.expr, true, { ...baseline, ...setup }, fields);
            if (fix === null) return null;
            Object.assign(setup, fix);
          }
          continue;
        }
        return sortKeys(setup);
      }
    }
    return null;
  }
}

function isFilled(v: unknown): boolean {
  return v !== null && v !== undefined && v !== "" && !(Array.isArray(v) && v.length === 0);
}

function applySideEffects(wf: WorkflowIR, from: string, to: string, record: Values): Values {
  const se = wf.sideEffects.find((s) => s.from === from && s.to === to);
  let out = record;
  for (const a of se?.actions ?? []) if ("set" in a) out = { ...out, ...a.set };
  return out;
}

function guardsHold(wf: WorkflowIR, route: string[], start: Values): boolean {
  let record = start;
  for (let i = 1; i < route.length; i++) {
    const from = route[i - 1] as string;
    const to = route[i] as string;
    const g = wf.guards.find((x) => x.from === from && x.to === to);
    if (g && (!g.requireFields.every((f) => isFilled(record[f])) || (g.condition && !holds(g.condition.expr, record)))) return false;
    record = applySideEffects(wf, from, to, record);
  }
  return true;
}

/** Source states whose targets an override variant changes. */
function overridden(wf: WorkflowIR, transitions: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(transitions).filter(([s, t]) => JSON.stringify(t) !== JSON.stringify(wf.transitions[s])));
}

/** Breadth-first shortest move sequences from the initial state (ties broken by declaration order). */
function shortestPaths(initial: string, transitions: Record<string, string[]>): Map<string, string[]> {
  const paths = new Map<string, string[]>([[initial, [initial]]]);
  const queue = [initial];
  while (queue.length > 0) {
    const s = queue.shift() as string;
    for (const t of transitions[s] ?? []) {
      if (paths.has(t)) continue;
      paths.set(t, [...(paths.get(s) as string[]), t]);
      queue.push(t);
    }
  }
  return paths;
}

export function buildSuiteCases(ir: DomainIR): SuiteCases {
  return new CaseBuilder(ir).build();
}
