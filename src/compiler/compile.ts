import type { ContractDocument } from "../contracts/contract-types.js";
import type { Finding } from "../contracts/findings.js";
import { hasErrors } from "../contracts/findings.js";
import { envelopeFqn, type Kind } from "../contracts/fqn.js";
import type { LoadedContract } from "../contracts/loader.js";
import { pyRepr } from "../contracts/py-repr.js";
import { validatedContract } from "../contracts/schema.js";
import { STDLIB_MIXINS } from "../contracts/stdlib.js";
import { asRecord, asStringArray } from "../contracts/unchecked.js";
import { compareText } from "../shared/text.js";
import type { Contract, ContractEnvelope, PathSegments } from "./context.js";
import { Reporter } from "./context.js";
import { buildEntity, buildMixin, checkReferenceDisplays, stdlibMixinIR } from "./entities.js";
import { findCycles, topologicalOrder } from "./graph.js";
import { buildAgent, buildAuth, buildInfra } from "./infra.js";
import type {
  AgentIR,
  AuthIR,
  ContractInfo,
  DependencyEdge,
  DomainIR,
  EntityIR,
  MixinIR,
  Operation,
  PageIR,
  RouteIR,
  WorkflowIR,
} from "./ir.js";
import { IR_VERSION } from "./ir.js";
import { MAX_IDENTIFIER_BYTES } from "./naming.js";
import { buildPage } from "./pages.js";
import { buildRoute, checkRouteRoles, reservedBasePath, routeBasePath, servedOperations } from "./routes.js";
import { buildWorkflow, checkWorkflowFields } from "./workflows.js";

export interface CompileResult {
  /** The IR; null when any error finding exists (generators never see a broken domain). */
  ir: DomainIR | null;
  /** The IR's summary, also when only the findings were asked for; null when any error exists. */
  summary: DomainIR["summary"] | null;
  findings: Finding[];
}

export interface CompileOptions {
  /**
   * Only the findings are wanted (`forge validate`, the language server): the IR is not assembled
   * and frozen, so `ir` is null and `summary` says what it would hold. Freezing alone is a tenth of
   * compiling a domain of 20,000 contracts.
   */
  findingsOnly?: boolean;
}

/** A dependency with the place in the contract that created it, so findings can point there. */
interface Reference {
  from: ContractEnvelope;
  to: string;
  via: DependencyEdge["via"];
  path: PathSegments;
  /** Kinds the target must have (empty: any kind). */
  expect: Kind[];
  /**
   * The edge runs from the target to this contract. An entity's `ai_integration` names agents that
   * read the entity; the agent depends on the entity (as its `input.entity` says), so an edge the
   * other way would make every such hook a cycle.
   */
  reverse: boolean;
}

/**
 * Compiles contracts into the IR. `contracts` are the schema-valid ones; `known` are every contract
 * whose envelope could be read (schema-invalid ones included), so that a reference to a contract
 * with a schema error is not also reported as unresolved. A contract in `contracts` that fails its
 * schema after all counts as known only: the compiler reads typed specs, never unchecked data.
 */
export function compileDomain(
  contracts: readonly LoadedContract[],
  known: readonly LoadedContract[] = contracts,
  options: CompileOptions = {},
): CompileResult {
  const reporter = new Reporter();
  const valid = new Set(contracts.filter((c) => validatedContract(c) !== null));
  const byFqn = indexByFqn(reporter, indexContracts(known));
  const usable = typedContracts([...byFqn.values()].filter((c) => valid.has(c.loaded)));
  const ofKind = groupByKind(usable);

  // References: explicit `requires` plus those derived from the spec. Each is checked to resolve.
  const references: Reference[] = [];
  for (const c of usable) collectReferences(c, references);
  const resolvable = (fqn: string): boolean => byFqn.has(fqn) || fqn in STDLIB_MIXINS;
  checkReferences(reporter, references, byFqn, resolvable);

  const { mixins, workflows, entityContracts, entities, usedStdlib } = buildModel(reporter, ofKind);

  const routeContracts = ofKind("Route");
  attachRoutes(reporter, routeContracts, entities);
  const routes = routeContracts.map((c) => buildRoute(reporter, c, entities.get(c.spec.entity)));
  checkUnique(reporter, routeContracts, (c) => routeBasePath(c, entities.get(c.spec.entity)), "route.duplicate_base_path", "base_path", [
    "spec",
    "base_path",
  ]);

  const pageContracts = ofKind("Page");
  const pages = pageContracts.map((c) => {
    const e = entities.get(c.spec.entity);
    e?.pages.push(c.fqn);
    return buildPage(reporter, c, e);
  });
  checkUnique(reporter, pageContracts, (c) => c.spec.route, "page.duplicate_route", "route", ["spec", "route"]);
  checkUnique(reporter, ofKind("Entity"), (c) => entities.get(c.fqn)?.table ?? "", "entity.duplicate_table", "table", ["metadata", "name"]);
  checkIdentifierLengths(reporter, [...ofKind("Entity"), ...ofKind("Mixin")], entities);

  const agentContracts = ofKind("Agent");
  const agents = agentContracts.map((c) => buildAgent(reporter, c, entities));
  decideApi(entities, agents);
  pageContracts.forEach((c, i) => checkPageOperations(reporter, c, entities.get(c.spec.entity), pages[i]));
  checkEventNames(reporter, agentContracts, entityContracts, emittedEvents(routes, [...workflows.values()]));
  const infraContracts = ofKind("Infra");
  const infra = infraContracts.map(buildInfra);
  const auth = compileAuth(reporter, infraContracts);
  if (auth) for (const c of routeContracts) checkRouteRoles(reporter, c, auth.roles);

  const nodes = [...new Set([...usable.map((c) => c.fqn), ...usedStdlib])].sort(compareText);
  const graph = dependencyGraph(reporter, nodes, references, byFqn, resolvable);

  const findings = reporter.findings;
  if (hasErrors(findings) || valid.size < known.length) return { ir: null, summary: null, findings };
  const summary: DomainIR["summary"] = {
    contracts: usable.length,
    entities: entities.size,
    workflows: workflows.size,
    routes: routes.length,
    pages: pages.length,
    agents: agents.length,
    mixins: mixins.filter((m) => !m.stdlib).length,
    infra: infra.length,
  };
  if (options.findingsOnly) return { ir: null, summary, findings };
  const ir: DomainIR = {
    irVersion: IR_VERSION,
    domain: mainDomain(usable),
    domains: [...new Set(usable.map((c) => c.domain))].sort(compareText),
    contracts: contractInfos(usable),
    entities: [...entities.values()],
    workflows: [...workflows.values()],
    routes,
    pages,
    agents,
    mixins,
    infra,
    auth,
    graph,
    summary,
  };
  // Readonly from here on: generators, the healer and the CLI share one IR, so none may change
  // what another reads. Freezing turns an accidental write into an error at the line that does it.
  return { ir: deepFreeze(ir), summary, findings };
}

/**
 * Builds what the rest hangs on, in dependency order of kinds: mixins and workflows, then the
 * entities that use them, then the stdlib mixins those entities use.
 */
function buildModel(reporter: Reporter, ofKind: KindLookup) {
  const userMixins = new Map(ofKind("Mixin").map((c) => [c.fqn, c]));
  const mixins: MixinIR[] = ofKind("Mixin").map((c) => buildMixin(reporter, c));
  const workflowContracts = new Map(ofKind("Workflow").map((c) => [c.fqn, c]));
  const workflows = new Map<string, WorkflowIR>(ofKind("Workflow").map((c) => [c.fqn, buildWorkflow(reporter, c)]));
  const entityContracts = new Map(ofKind("Entity").map((c) => [c.fqn, c]));
  const entities = new Map<string, EntityIR>(ofKind("Entity").map((c) => [c.fqn, buildEntity(reporter, c, userMixins, workflows)]));
  for (const [fqn, e] of entities) checkReferenceDisplays(reporter, entityContracts.get(fqn) as Contract<"Entity">, e, entities);
  for (const e of entities.values()) {
    const wf = e.stateMachine ? workflows.get(e.stateMachine) : undefined;
    if (!wf) continue;
    wf.entities.push(e.fqn);
    checkWorkflowFields(reporter, workflowContracts.get(wf.fqn) as Contract<"Workflow">, wf, e);
  }
  const usedStdlib = [...new Set([...entities.values()].flatMap((e) => e.mixins).filter((m) => m in STDLIB_MIXINS))].sort(compareText);
  mixins.push(...usedStdlib.map(stdlibMixinIR));
  mixins.sort((a, b) => compareText(a.fqn, b.fqn));
  return { mixins, workflows, entityContracts, entities, usedStdlib };
}

/** The dependency graph over every contract and the stdlib mixins in use; cycles are reported. */
function dependencyGraph(
  reporter: Reporter,
  nodes: string[],
  references: readonly Reference[],
  byFqn: ReadonlyMap<string, ContractEnvelope>,
  resolvable: (fqn: string) => boolean,
): DomainIR["graph"] {
  const edges = dependencyEdges(references, resolvable);
  for (const cycle of findCycles(nodes, edges)) {
    const from = byFqn.get(cycle[0] as string) as ContractEnvelope;
    const ref = references.find((r) => r.from.fqn === from.fqn && r.to === cycle[1]);
    reporter.report(from, ref?.path ?? [], "graph.cycle", `dependency cycle: ${cycle.join(" -> ")}`);
  }
  const { order } = topologicalOrder(nodes, edges);
  return { nodes, edges, order };
}

/** Indexes contracts by FQN; a second contract with a taken FQN is reported and left out. */
function indexByFqn(reporter: Reporter, all: readonly ContractEnvelope[]): Map<string, ContractEnvelope> {
  const byFqn = new Map<string, ContractEnvelope>();
  for (const c of all) {
    const first = byFqn.get(c.fqn);
    if (first) {
      reporter.report(
        c,
        ["metadata", "name"],
        "contract.duplicate",
        `duplicate contract ${pyRepr(c.fqn)}: also defined in ${first.loaded.file}`,
      );
      continue;
    }
    byFqn.set(c.fqn, c);
  }
  return byFqn;
}

/** The contracts of one kind, typed as that kind. */
type KindLookup = <K extends Kind>(k: K) => Contract<K>[];

/**
 * Groups contracts by kind in FQN order, so every build step sees them in one order. The lookup
 * returns a fresh array each call, so a caller that sorts or pushes cannot disturb another.
 */
function groupByKind(usable: readonly Contract[]): KindLookup {
  const byKind = new Map<Kind, Contract[]>();
  for (const c of [...usable].sort((a, b) => compareText(a.fqn, b.fqn))) {
    const list = byKind.get(c.kind);
    if (list) list.push(c);
    else byKind.set(c.kind, [c]);
  }
  // The list under `k` holds only contracts whose kind is `k`; TypeScript cannot follow a map's
  // key into its values' type, hence the cast.
  return <K extends Kind>(k: K): Contract<K>[] => [...(byKind.get(k) ?? [])] as Contract<K>[];
}

/** Reports references that do not resolve, or that resolve to a contract of a kind not expected. */
function checkReferences(
  reporter: Reporter,
  references: readonly Reference[],
  byFqn: ReadonlyMap<string, ContractEnvelope>,
  resolvable: (fqn: string) => boolean,
): void {
  for (const r of references) {
    if (!resolvable(r.to)) {
      reporter.unresolved(r.from, r.path, r.to);
      continue;
    }
    const targetKind = byFqn.get(r.to)?.kind ?? "Mixin";
    if (r.expect.length > 0 && !r.expect.includes(targetKind)) {
      reporter.report(r.from, r.path, "ref.wrong_kind", `${pyRepr(r.to)} is not one of the ${r.expect.join(" or ")} contracts`);
    }
  }
}

/**
 * One Route serves an entity and sets its base path, so every generator agrees on the URL. Records
 * each Route on its entity and reports a second Route for an entity or a reserved base path.
 */
function attachRoutes(reporter: Reporter, routeContracts: readonly Contract<"Route">[], entities: ReadonlyMap<string, EntityIR>): void {
  for (const c of routeContracts) {
    const e = entities.get(c.spec.entity);
    if (e && e.routes.length > 0) {
      reporter.report(
        c,
        ["spec", "entity"],
        "route.duplicate_entity",
        `${e.fqn} is already served by ${e.routes[0]}; an entity has one Route (merge the endpoints into it)`,
      );
      continue;
    }
    if (e) e.basePath = routeBasePath(c, e);
    e?.routes.push(c.fqn);
    const base = routeBasePath(c, e);
    const reserved = reservedBasePath(base);
    if (reserved) {
      reporter.report(
        c,
        c.spec.base_path !== undefined ? ["spec", "base_path"] : ["spec", "entity"],
        "route.reserved_base_path",
        `base path ${pyRepr(base)} clashes with ${pyRepr(reserved)}, which the generated app serves itself; choose another base_path`,
      );
    }
  }
}

/** The domain's auth from its one auth Infra contract; a second one is reported. */
function compileAuth(reporter: Reporter, infraContracts: readonly Contract<"Infra">[]): AuthIR | null {
  const authContracts = infraContracts.filter((c) => c.spec.category === "auth");
  for (const extra of authContracts.slice(1)) {
    reporter.report(
      extra,
      ["spec", "category"],
      "infra.duplicate_auth",
      `only one auth Infra contract is allowed; another is ${authContracts[0]?.fqn}`,
    );
  }
  const authContract = authContracts[0];
  return authContract ? buildAuth(reporter, authContract) : null;
}

/** The resolvable references as deduplicated dependency edges, sorted so the graph is stable. */
function dependencyEdges(references: readonly Reference[], resolvable: (fqn: string) => boolean): DependencyEdge[] {
  const edgeKey = (e: { from: string; to: string }): string => `${e.from}\u0000${e.to}`;
  const edgeMap = new Map<string, DependencyEdge>();
  for (const r of references) {
    if (!resolvable(r.to)) continue;
    // A self-reference (an employee's manager) is a foreign key to the same table, not a cycle.
    if (r.from.fqn === r.to) continue;
    const e: DependencyEdge = r.reverse ? { from: r.to, to: r.from.fqn, via: r.via } : { from: r.from.fqn, to: r.to, via: r.via };
    const key = edgeKey(e);
    if (!edgeMap.has(key)) edgeMap.set(key, e);
  }
  return [...edgeMap.values()].sort((a, b) => compareText(a.from, b.from) || compareText(a.to, b.to));
}

/** The IR's summary of each usable contract's metadata, in FQN order. */
function contractInfos(usable: readonly Contract[]): ContractInfo[] {
  return usable
    .map((c) => ({
      fqn: c.fqn,
      kind: c.kind,
      name: c.name,
      domain: c.domain,
      file: c.loaded.file,
      description: c.meta.description ?? "",
      tags: c.meta.tags ?? [],
      version: c.meta.version ?? null,
    }))
    .sort((a, b) => compareText(a.fqn, b.fqn));
}

/**
 * Freezes an IR again after it crossed to another thread (a structured clone is not frozen), so
 * that what is derived from it once per IR (generators/once-per-ir.ts) is derived once there too.
 */
export function freezeIr(ir: DomainIR): DomainIR {
  return deepFreeze(ir);
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  // Indexes and for-in rather than Object.values: no array per object on an IR of 100,000 objects.
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else for (const key in value) deepFreeze(value[key]);
  return Object.freeze(value);
}

/**
 * Reads the envelope of each loaded contract; contracts without a usable kind and name are skipped.
 * The envelope only: these include contracts whose spec failed the schema.
 */
function indexContracts(loaded: readonly LoadedContract[]): ContractEnvelope[] {
  const out: ContractEnvelope[] = [];
  for (const l of loaded) {
    const fqn = envelopeFqn(l.data);
    if (fqn === null) continue;
    // envelopeFqn accepted the kind and found name and domain to be strings.
    const meta = l.data.metadata as { name: string; domain: string };
    out.push({ fqn, kind: l.data.kind as Kind, name: meta.name, domain: meta.domain, loaded: l });
  }
  return out;
}

/** The schema-valid contracts with their data typed by kind. */
function typedContracts(envelopes: readonly ContractEnvelope[]): Contract[] {
  const out: Contract[] = [];
  for (const e of envelopes) {
    const data = validatedContract(e.loaded)?.data;
    if (data) out.push(withSpec(e, data));
  }
  return out;
}

/**
 * Joins a contract's envelope to its typed spec. One object literal for every kind, in the
 * envelope's property order: every builder reads these records, and a spread per kind builds them
 * the slow way (see the note at the end of context.ts).
 * The cast is the one place the kind and the spec's type are tied: `data` is a ContractDocument,
 * whose `kind` decides its `spec`.
 */
function withSpec(e: ContractEnvelope, data: ContractDocument): Contract {
  return {
    fqn: e.fqn,
    kind: data.kind,
    name: e.name,
    domain: e.domain,
    loaded: e.loaded,
    spec: data.spec,
    meta: data.metadata,
    requires: data.requires ?? [],
  } as Contract;
}

/**
 * The references one contract makes, as the compiler resolves them (the language server indexes
 * them for go to definition, rename and which contracts an edit affects).
 */
export function referencesOf(loaded: LoadedContract): { to: string; via: DependencyEdge["via"]; path: PathSegments; expect: Kind[] }[] {
  const [c] = indexContracts([loaded]);
  return c ? referencesIn(c.kind, loaded.data) : [];
}

/** The references of a contract, each with the contract it comes from. */
function collectReferences(c: Contract, out: Reference[]): void {
  // Written out, not spread: the graph reads every reference several times (see context.ts).
  for (const r of referencesIn(c.kind, c.loaded.data))
    out.push({ from: c, to: r.to, via: r.via, path: r.path, expect: r.expect, reverse: r.reverse });
}

/**
 * The references in a contract's data. The data is read as unchecked JSON (`unchecked.ts`): the
 * language server indexes the references of contracts that do not pass the schema yet, so that go
 * to definition and rename keep working in a file being edited; the compiler reads the same list.
 */
function referencesIn(kind: Kind, data: Readonly<Record<string, unknown>>): Omit<Reference, "from">[] {
  const out: Omit<Reference, "from">[] = [];
  const add = (to: unknown, via: Reference["via"], path: PathSegments, expect: Kind[], reverse = false): void => {
    if (typeof to === "string" && to !== "") out.push({ to, via, path, expect, reverse });
  };
  asStringArray(data.requires).forEach((r, i) => add(r, "requires", ["requires", i], []));
  const spec = asRecord(data.spec);
  switch (kind) {
    case "Entity": {
      asStringArray(spec.mixins).forEach((m, i) => add(m, "mixin", ["spec", "mixins", i], ["Mixin"]));
      add(spec.state_machine, "state_machine", ["spec", "state_machine"], ["Workflow"]);
      for (const [name, def] of Object.entries(asRecord(spec.fields))) {
        add(asRecord(asRecord(def).references).entity, "reference", ["spec", "fields", name, "references", "entity"], ["Entity"]);
      }
      for (const [event, agents] of Object.entries(asRecord(spec.ai_integration))) {
        if (Array.isArray(agents))
          agents.forEach((a, i) => add(a, "ai_integration", ["spec", "ai_integration", event, i], ["Agent"], true));
        else add(agents, "ai_integration", ["spec", "ai_integration", event], ["Agent"], true);
      }
      break;
    }
    case "Mixin":
      for (const [name, def] of Object.entries(asRecord(spec.fields))) {
        add(asRecord(asRecord(def).references).entity, "reference", ["spec", "fields", name, "references", "entity"], ["Entity"]);
      }
      break;
    case "Route":
      add(spec.entity, "entity", ["spec", "entity"], ["Entity"]);
      (Array.isArray(spec.endpoints) ? spec.endpoints : []).forEach((e, i) => {
        (Array.isArray(asRecord(e).side_effects) ? (asRecord(e).side_effects as unknown[]) : []).forEach((s, j) => {
          add(asRecord(s).invoke, "side_effect", ["spec", "endpoints", i, "side_effects", j, "invoke"], ["Agent", "Workflow"]);
        });
      });
      break;
    case "Page":
      add(spec.entity, "entity", ["spec", "entity"], ["Entity"]);
      break;
    case "Agent":
      add(asRecord(spec.input).entity, "agent_input", ["spec", "input", "entity"], ["Entity"]);
      break;
    default:
      break;
  }
  return out;
}

/**
 * The API of each entity, decided once: the operations its Route serves and where, and the agent
 * runs endpoint beside them when an agent changes its records. Both the backend and the frontend
 * generators read this answer; an entity without a Route is served nowhere.
 */
function decideApi(entities: ReadonlyMap<string, EntityIR>, agents: readonly AgentIR[]): void {
  const changedByAgents = new Set(agents.map((a) => a.inputEntity));
  for (const e of entities.values()) {
    const route = e.routes[0];
    if (route === undefined) continue;
    e.api = {
      route,
      basePath: e.basePath,
      operations: servedOperations(e.basePath, e.stateMachine !== null),
      agentRuns: changedByAgents.has(e.fqn) ? `${e.basePath}/{id}/agent-runs` : null,
    };
  }
}

/**
 * A Page lists, shows, creates, edits and deletes records of its entity, and a kanban view moves
 * them between states: operations some Route must serve. None is added silently: the contracts say
 * what the API exposes, so a Page whose entity has no Route is an error pointing at the entity.
 */
function checkPageOperations(reporter: Reporter, c: Contract<"Page">, entity: EntityIR | undefined, page: PageIR | undefined): void {
  if (!entity) return;
  const needed: Operation[] = ["list", "get", "create", "update", "delete"];
  if (page?.views.some((v) => v.type === "kanban") && entity.stateMachine) needed.push("transition");
  const served = new Set(entity.api?.operations.map((o) => o.operation) ?? []);
  const missing = needed.filter((op) => !served.has(op));
  if (missing.length === 0) return;
  reporter.report(
    c,
    ["spec", "entity"],
    "page.no_route",
    entity.api
      ? `the page needs the ${missing.join(", ")} operation of ${entity.fqn}, which its Route ${entity.api.route} does not serve`
      : `no Route serves ${entity.fqn}, and the page needs its ${missing.join(", ")} operations: add a Route contract with entity: ${entity.fqn}`,
  );
}

/** Every event a route or a workflow transition emits. */
function emittedEvents(routes: readonly RouteIR[], workflows: readonly WorkflowIR[]): Set<string> {
  const out = new Set<string>();
  for (const r of routes) for (const e of r.endpoints) for (const s of e.sideEffects) if ("emitEvent" in s) out.add(s.emitEvent);
  for (const w of workflows) for (const s of w.sideEffects) for (const a of s.actions) if ("emitEvent" in a) out.add(a.emitEvent);
  return out;
}

/**
 * An agent triggered by, or hooked to, an event nothing emits would never run: most often a typo.
 * A warning, not an error, since the events of another domain may emit it later.
 */
function checkEventNames(
  reporter: Reporter,
  agents: readonly Contract<"Agent">[],
  entities: ReadonlyMap<string, Contract<"Entity">>,
  emitted: ReadonlySet<string>,
): void {
  const known = [...emitted].sort(compareText);
  const warn = (c: ContractEnvelope, path: PathSegments, event: string): void =>
    reporter.report(c, path, "event.never_emitted", `event ${pyRepr(event)} is never emitted; emitted events: ${pyRepr(known)}`, {
      severity: "warning",
    });
  for (const c of agents) {
    const trigger = c.spec.trigger;
    if (trigger && !emitted.has(trigger)) warn(c, ["spec", "trigger"], trigger);
  }
  for (const c of entities.values()) {
    for (const event of Object.keys(c.spec.ai_integration ?? {})) {
      if (!emitted.has(event)) warn(c, ["spec", "ai_integration", event], event);
    }
  }
}

/**
 * Tables and columns longer than PostgreSQL's identifier limit are refused, not shortened: their
 * names are the API's field names and the queries' columns, and a silent cut (PostgreSQL's) or a
 * hashed name (ours) would make the database differ from the contract. Derived names (indexes,
 * constraints, sequences) are shortened instead: nobody reads them but the database.
 */
function checkIdentifierLengths(
  reporter: Reporter,
  contracts: readonly Contract<"Entity" | "Mixin">[],
  entities: ReadonlyMap<string, EntityIR>,
): void {
  const tooLong = (c: ContractEnvelope, path: PathSegments, what: string, name: string): void => {
    const bytes = Buffer.byteLength(name, "utf8");
    if (bytes <= MAX_IDENTIFIER_BYTES) return;
    reporter.report(
      c,
      path,
      "name.too_long",
      `${what} ${pyRepr(name)} is ${bytes} bytes long; PostgreSQL keeps only ${MAX_IDENTIFIER_BYTES} bytes of a name and would cut it: choose a name of at most ${MAX_IDENTIFIER_BYTES} bytes`,
    );
  };
  for (const c of contracts) {
    if (c.kind === "Entity") {
      const table = entities.get(c.fqn)?.table;
      if (table !== undefined) tooLong(c, c.spec.table !== undefined ? ["spec", "table"] : ["metadata", "name"], "table name", table);
    }
    for (const name of Object.keys(c.spec.fields)) tooLong(c, ["spec", "fields", name], "field name", name);
  }
}

function checkUnique<C extends ContractEnvelope>(
  reporter: Reporter,
  contracts: readonly C[],
  keyOf: (c: C) => string,
  code: string,
  what: string,
  path: PathSegments,
): void {
  const seen = new Map<string, C>();
  for (const c of contracts) {
    const key = keyOf(c);
    const first = seen.get(key);
    if (first) reporter.report(c, path, code, `${what} ${pyRepr(key)} is already used by ${first.fqn}`);
    else seen.set(key, c);
  }
}

function mainDomain(contracts: readonly Contract[]): string {
  const counts = new Map<string, number>();
  for (const c of contracts) counts.set(c.domain, (counts.get(c.domain) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))[0]?.[0] ?? "app";
}
