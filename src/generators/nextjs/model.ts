import type {
  DomainIR,
  EntityIR,
  FieldIR,
  Operation,
  PageIR,
  RouteIR,
  ServedOperationIR,
  ViewIR,
  WorkflowIR,
} from "../../compiler/index.js";
import { camelCase, humanize, kebabCase, pascalCase } from "../../compiler/index.js";
import { expressionNames } from "../../contracts/expression.js";
import { templateExports } from "./templates.js";

/**
 * What the frontend needs from the IR, resolved once: which entities get an API client, which get
 * UI components, and how their fields appear in forms, tables and detail pages.
 */
export interface FrontendModel {
  ir: DomainIR;
  title: string;
  auth: boolean;
  /** Every entity, for types.ts. */
  entities: EntityIR[];
  /** Entity FQN -> its TypeScript type name (see `entityTypeNames`). */
  typeNames: ReadonlyMap<string, string>;
  /** One client per entity the API serves (entity.api), in the order of their Routes. */
  clients: ApiClient[];
  /** Entities that have at least one Page, in the order of their first page. */
  uiEntities: UiEntity[];
  pages: UiPage[];
}

export interface ApiClient {
  /** Exported name in api.ts, e.g. `ticketApi`. */
  name: string;
  entity: EntityIR;
  /** What the compiler decided the API serves for the entity; the client calls nothing else. */
  basePath: string;
  operations: Set<Operation>;
  /** The served operations with their methods and paths, in the compiler's order. */
  served: readonly ServedOperationIR[];
  /** `GET {basePath}/{id}/agent-runs`, when agents change the entity's records. */
  agentRuns: string | null;
  /** The Route contract that serves the entity (its rules are shown by the forms). */
  route: RouteIR;
}

export interface UiEntity {
  entity: EntityIR;
  /** The entity's TypeScript type name, e.g. `Ticket`; the stem of its components' names. */
  type: string;
  /** kebab-case folder and file stem, e.g. `ticket`. */
  kebab: string;
  camel: string;
  client: ApiClient;
  workflow: WorkflowIR | null;
  /** The field shown as the record's heading and as the default card title. */
  headingField: string;
  /** Fields on the create form, the edit form and the detail page. */
  createFields: FieldIR[];
  editFields: FieldIR[];
  detailFields: FieldIR[];
  /** Reference fields whose target entity has an API client: field name -> that client. */
  references: Map<string, ApiClient>;
  /** Validation rules of the create and update endpoints, as the forms show their failures. */
  createRules: UiRule[];
  updateRules: UiRule[];
}

/**
 * A validation rule as the form reports it: the API answers a failed rule with the rule's source
 * text in `details.rule` and names no field, so the form needs the fields the expression reads
 * and a message meant for people (the contract's message, else its error name in words).
 */
export interface UiRule {
  source: string;
  fields: string[];
  message: string;
}

export interface UiPage {
  page: PageIR;
  ui: UiEntity;
  /** Route segments of the list page, e.g. ["tickets"]. */
  segments: string[];
  route: string;
  component: string;
  table: ViewIR | null;
  kanban: ViewIR | null;
  defaultView: "table" | "kanban";
}

/** Fields the soft_deletable mixin manages; the API sets them on DELETE, so no form shows them. */
const SOFT_DELETE_ORIGIN = "mixin/stdlib/soft_deletable";

/** Words shown in capitals in labels (`external_url` -> `External URL`). */
const ACRONYMS = new Set(["api", "id", "ip", "sla", "sku", "url", "uri", "uuid", "vat"]);

export function fieldLabel(f: FieldIR): string {
  const base = f.references && f.name.endsWith("_id") ? f.name.slice(0, -3) : f.name;
  return humanize(base)
    .split(" ")
    .map((w) => (ACRONYMS.has(w.toLowerCase()) ? w.toUpperCase() : w))
    .join(" ");
}

/**
 * Display order of fields: the entity's own fields as declared, then those its mixins add, then
 * what the server fills in (id, number, timestamps). The IR lists mixin fields first.
 */
function displayOrder(fields: readonly FieldIR[]): FieldIR[] {
  const rank = (f: FieldIR): number => (f.primaryKey || f.computed ? 2 : f.origin === "entity" ? 0 : 1);
  return fields
    .map((f, i) => ({ f, i }))
    .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
    .map((x) => x.f);
}

function rulesOf(entity: EntityIR, route: RouteIR | null, operation: Operation): UiRule[] {
  const endpoint = route?.endpoints.find((e) => e.operation === operation);
  const known = new Set(entity.fields.map((f) => f.name));
  return (endpoint?.validation ?? []).map((r) => ({
    source: r.source,
    fields: expressionNames(r.expr).filter((n) => known.has(n)),
    message: r.onFail.message ?? `${humanize(r.onFail.error)}.`,
  }));
}

/**
 * Globals of JavaScript, TypeScript's utility types and the DOM and React names a generated file
 * may use: an entity type of that name would shadow them (`Promise<Promise>`, `Record<string,
 * never>`), and Biome refuses shadowed globals.
 */
const TS_GLOBALS = new Set(
  (
    "AbortController AbortSignal AggregateError Array ArrayBuffer ArrayLike Atomics Awaited BigInt Blob Boolean " +
    "Capitalize ConstructorParameters DataView Date Document Element Error EvalError Event Exclude Extract File " +
    "FinalizationRegistry Float32Array Float64Array FormData Function Generator Headers History HTMLElement " +
    "Image InstanceType Int16Array Int32Array Int8Array Intl Iterable Iterator JSON JSX Location Lowercase Map " +
    "Math Metadata NaN Navigator Node NonNullable Notification Number Object Omit Option Parameters Partial " +
    "Pick Promise PromiseLike PropertyKey Proxy RangeError React ReadonlyArray ReadonlyMap ReadonlySet Readonly " +
    "Record ReferenceError Reflect RegExp Request Required Response ReturnType Set SharedArrayBuffer Storage " +
    "String Symbol SyntaxError Text TypeError URIError URL URLSearchParams Uint16Array Uint32Array Uint8Array " +
    "Uncapitalize Uppercase WeakMap WeakRef WeakSet Window Worker"
  ).split(" "),
);

/** What the generator appends to an entity's type name for its other types and components. */
const TYPE_SUFFIXES = ["", "Create", "Update", "Form", "Table", "Detail", "Board", "Kanban", "Column", "CardField"];

/** Types types.ts always declares, besides the entities'. */
const FIXED_TYPES = ["Links", "AgentRun", "AgentRunList"];

/** A global, or a name the static files or types.ts declare: no generated type may take it. */
export function isReservedTypeName(name: string): boolean {
  return TS_GLOBALS.has(name) || templateExports().has(name) || FIXED_TYPES.includes(name);
}

/**
 * The TypeScript type name of each entity: its class name, unless that name or one it is the stem
 * of (`RecordForm`, `RecordTable`) is a global or an export of the static files; then `Entity`
 * is appended (`record` -> `RecordEntity`), with a number when that is taken too.
 */
export function entityTypeNames(entities: readonly EntityIR[]): Map<string, string> {
  const unsafe = (stem: string): boolean => TYPE_SUFFIXES.some((s) => isReservedTypeName(`${stem}${s}`));
  const taken = new Set(entities.map((e) => e.className).filter((n) => !unsafe(n)));
  const out = new Map<string, string>();
  for (const e of entities) {
    let name = e.className;
    if (unsafe(name)) {
      const base = `${name}Entity`;
      name = base;
      for (let i = 2; unsafe(name) || taken.has(name); i++) name = `${base}${i}`;
      taken.add(name);
    }
    out.set(e.fqn, name);
  }
  return out;
}

function clientName(name: string, used: Set<string>): string {
  let base = camelCase(name);
  if (!/api$/i.test(base)) base = `${base}Api`;
  let n = base;
  for (let i = 2; used.has(n); i++) n = `${base}${i}`;
  used.add(n);
  return n;
}

function headingField(e: EntityIR): string {
  const strings = e.fields.filter((f) => f.type === "string" && !f.enum);
  const preferred = ["title", "name", "subject", "label"];
  for (const p of preferred) if (strings.some((f) => f.name === p)) return p;
  const required = strings.find((f) => f.required && f.writable);
  if (required) return required.name;
  if (e.fields.some((f) => f.name === "number")) return "number";
  return strings.find((f) => f.writable)?.name ?? "id";
}

export function buildFrontendModel(ir: DomainIR): FrontendModel {
  const typeNames = entityTypeNames(ir.entities);
  const byFqn = new Map(ir.entities.map((e) => [e.fqn, e]));
  const clients = apiClients(ir, byFqn);
  const uiEntities = pageEntities(ir, byFqn, clients, typeNames);
  const uiOf = new Map(uiEntities.map((ui) => [ui.entity.fqn, ui]));
  const pages: UiPage[] = [];
  for (const p of ir.pages) {
    const ui = uiOf.get(p.entity);
    if (ui) pages.push(uiPage(p, ui));
  }
  return {
    ir,
    title: humanize(ir.domain),
    auth: ir.auth !== null,
    entities: ir.entities,
    typeNames,
    clients,
    uiEntities,
    pages,
  };
}

/** One API client per served entity, in route order, each with a name unique among them. */
function apiClients(ir: DomainIR, byFqn: ReadonlyMap<string, EntityIR>): ApiClient[] {
  const used = new Set<string>();
  const clients: ApiClient[] = [];
  for (const r of ir.routes) {
    const entity = byFqn.get(r.entity);
    const api = entity?.api;
    if (!entity || !api || api.route !== r.fqn) continue;
    clients.push({
      name: clientName(r.name, used),
      entity,
      basePath: api.basePath,
      operations: new Set(api.operations.map((o) => o.operation)),
      served: api.operations,
      agentRuns: api.agentRuns,
      route: r,
    });
  }
  return clients;
}

/** The entities pages show, once each in page order, with their forms, details and references. */
function pageEntities(
  ir: DomainIR,
  byFqn: ReadonlyMap<string, EntityIR>,
  clients: readonly ApiClient[],
  typeNames: ReadonlyMap<string, string>,
): UiEntity[] {
  // The compiler refuses a Page on an entity no Route serves, so every page entity has a client.
  const clientByEntity = new Map(clients.map((c) => [c.entity.fqn, c]));
  const clientOf = (fqn: string): ApiClient | undefined => clientByEntity.get(fqn);
  const uiEntities: UiEntity[] = [];
  const seen = new Set<string>();
  for (const p of ir.pages) {
    const entity = byFqn.get(p.entity);
    if (!entity || seen.has(entity.fqn)) continue;
    const client = clientOf(entity.fqn);
    if (!client) continue;
    const shown = displayOrder(entity.fields.filter((f) => f.origin !== SOFT_DELETE_ORIGIN && f.name !== "state"));
    const references = new Map<string, ApiClient>();
    for (const f of entity.fields) {
      const target = f.references ? clientOf(f.references.entity) : undefined;
      if (target?.operations.has("list")) references.set(f.name, target);
    }
    uiEntities.push({
      entity,
      type: typeNames.get(entity.fqn) ?? entity.className,
      kebab: kebabCase(entity.name),
      camel: camelCase(entity.name),
      client,
      workflow: entity.stateMachine ? (ir.workflows.find((w) => w.fqn === entity.stateMachine) ?? null) : null,
      headingField: headingField(entity),
      // Forms leave computed and immutable fields out. Immutable means "cannot change
      // after creation", so the create form keeps writable immutable fields (an agent's required,
      // immutable email could otherwise never be set) and only the edit form drops them.
      createFields: shown.filter((f) => f.writable && !f.computed),
      editFields: shown.filter((f) => f.updatable && !f.computed && !f.immutable),
      detailFields: shown,
      references,
      createRules: rulesOf(entity, client.route, "create"),
      updateRules: rulesOf(entity, client.route, "update"),
    });
    seen.add(entity.fqn);
  }
  return uiEntities;
}

/** A page's place in the app (its route segments and component) and the views it opens on. */
function uiPage(p: PageIR, ui: UiEntity): UiPage {
  // The root path belongs to the dashboard; a page declared at "/" moves to /{page name}.
  const declared = p.route.split("/").filter(Boolean);
  const segments = declared.length > 0 ? declared : [kebabCase(p.name)];
  const table = p.views.find((v) => v.type === "table") ?? null;
  const kanban = ui.workflow ? (p.views.find((v) => v.type === "kanban") ?? null) : null;
  const declaredDefault = p.views.find((v) => v.default)?.type;
  const defaultView = declaredDefault === "kanban" && kanban ? "kanban" : table ? "table" : kanban ? "kanban" : "table";
  return {
    page: p,
    ui,
    segments,
    route: `/${segments.join("/")}`,
    component: `${pascalCase(p.name)}`,
    table,
    kanban,
    defaultView,
  };
}
