import type { Expr } from "../contracts/expression.js";
import type { Kind } from "../contracts/fqn.js";
import type { FieldType } from "./field-types.js";

/**
 * The compiled domain: a plain, JSON-serialisable value that every generator, the Healer, the
 * factory and the extractor consume. Everything is resolved here (mixins composed, references
 * checked, names derived, lists sorted) so that generators stay simple, pure string builders.
 * Bump IR_VERSION when the shape changes incompatibly.
 */
export const IR_VERSION = 1;

export interface DomainIR {
  irVersion: typeof IR_VERSION;
  /** The main domain name (the one most contracts belong to); used for /health and titles. */
  domain: string;
  /** Every domain present, sorted. */
  domains: string[];
  contracts: ContractInfo[];
  entities: EntityIR[];
  workflows: WorkflowIR[];
  routes: RouteIR[];
  pages: PageIR[];
  agents: AgentIR[];
  mixins: MixinIR[];
  infra: InfraIR[];
  /** The auth Infra contract, resolved; null when the domain has none (auth is then not generated). */
  auth: AuthIR | null;
  graph: DependencyGraph;
  summary: Summary;
}

/** Where an IR item comes from: the fields every contract's IR starts with. */
export interface ContractPlaceIR {
  fqn: string;
  name: string;
  domain: string;
  /** Path of the contract file as the loader displayed it. */
  file: string;
}

/** The place and the contract's `metadata.description`. */
export interface ContractHeaderIR extends ContractPlaceIR {
  description: string;
}

export interface ContractInfo {
  fqn: string;
  kind: Kind;
  name: string;
  domain: string;
  /** Path of the contract file as the loader displayed it. */
  file: string;
  description: string;
  tags: string[];
  version: string | null;
}

export interface Summary {
  contracts: number;
  entities: number;
  workflows: number;
  routes: number;
  pages: number;
  agents: number;
  mixins: number;
  infra: number;
}

export interface DependencyGraph {
  /** FQNs of all nodes (contracts and stdlib mixins in use), sorted. */
  nodes: string[];
  /** `from` depends on `to`. Sorted by from, then to. */
  edges: DependencyEdge[];
  /** A stable topological order: dependencies first, ties broken by FQN. */
  order: string[];
}

export interface DependencyEdge {
  from: string;
  to: string;
  /** `requires` for explicit dependencies, otherwise what derived it. */
  via: "requires" | "reference" | "mixin" | "state_machine" | "entity" | "agent_input" | "side_effect" | "ai_integration";
}

export type { FieldType } from "./field-types.js";

export type ComputedIR =
  | { kind: "now" }
  | { kind: "now_on_update" }
  | { kind: "current_user" }
  | { kind: "uuid" }
  /**
   * A per-entity sequence rendered through `format`: `{prefix}` is the entity's number prefix,
   * `{n}` the next value, `{n:05}` the value zero-padded to 5 digits.
   */
  | { kind: "sequence"; format: string; prefix: string | null; sequenceName: string };

export interface ConstraintsIR {
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

export interface ReferenceIR {
  entity: string;
  /** Name of the target entity (its `metadata.name`). */
  entityName: string;
  /** Target field shown instead of the id; null when the contract gives none. */
  display: string | null;
  graphEdge: string | null;
  graphDirection: "forward" | "reverse";
  /**
   * What deleting the referenced record does to this one: refuse (409), delete it too, or clear the
   * field. Unset in the contract: restrict for a required field, set_null for an optional one.
   */
  onDelete: OnDeleteRule;
}

export type OnDeleteRule = "restrict" | "cascade" | "set_null";

export interface FieldIR {
  name: string;
  type: FieldType;
  description: string;
  required: boolean;
  immutable: boolean;
  /** Whether `default` was given (a default may legitimately be null). */
  hasDefault: boolean;
  default: unknown;
  format: string | null;
  enum: (string | number | boolean)[] | null;
  itemsType: FieldType | null;
  computed: ComputedIR | null;
  constraints: ConstraintsIR;
  references: ReferenceIR | null;
  renamedFrom: string | null;
  /** `system` for the implicit id, timestamps and state; `entity`; or the mixin FQN it came from. */
  origin: string;
  primaryKey: boolean;
  /** Set by clients on create: not computed, not the primary key, not the workflow state. */
  writable: boolean;
  /** Set by clients on update: writable and not immutable. */
  updatable: boolean;
  /**
   * Whether a record may hold null in the field: the column is NULL-able and the API's record type
   * says `| None`. Decided here once, for every target: required fields, the primary key, the
   * workflow state and the timestamps the server sets on every write are never null.
   */
  nullable: boolean;
  /**
   * Whether every record the API returns has a value in the field: `!nullable`, named for the
   * readers of records (the frontend's types, the generated tests) so none derives it again.
   */
  alwaysPresent: boolean;
}

export interface EntityIR extends ContractHeaderIR {
  /** PascalCase class name, e.g. `TicketComment`. */
  className: string;
  /** Human label, e.g. `Ticket comment`, and its plural. */
  label: string;
  labelPlural: string;
  table: string;
  /**
   * Collection path of the entity, e.g. `/tickets`: its Route's, else the kebab-case plural a Route
   * would get by default. Served only when `api` is set; clients read `api.basePath`.
   */
  basePath: string;
  numberPrefix: string | null;
  icon: string | null;
  mixins: string[];
  /** Effective fields: id, mixin fields, declared fields, timestamps, then `state`. */
  fields: FieldIR[];
  primaryKey: "id";
  stateMachine: string | null;
  softDelete: boolean;
  /** `list_total`: how a list's `total` is computed on PostgreSQL (see entity.schema.json). */
  listTotal: "count" | "counter";
  /** Fields searched by `q=`: string, text and email fields. */
  searchFields: string[];
  /**
   * `ai_integration`: event name -> FQNs of the agents to run for the record that event is about
   * (in addition to the agents whose `trigger` names the event). Keys and FQNs sorted.
   */
  aiIntegration: Record<string, string[]>;
  /** FQNs of the routes and pages built on this entity. */
  routes: string[];
  pages: string[];
  /**
   * What the API serves for this entity and where, decided once here from its Route; null when no
   * Route serves it (then the backend has no path for it, and a Page on it is a compile error).
   */
  api: EntityApiIR | null;
}

/** The HTTP operations the API serves for one entity (see docs/architecture.md, "The IR"). */
export interface EntityApiIR {
  /** FQN of the Route contract that serves the entity. */
  route: string;
  /** Collection path, without a trailing slash, e.g. `/tickets`. */
  basePath: string;
  /** The operations served, in the order list, get, create, update, delete, transition. */
  operations: ServedOperationIR[];
  /** `GET {basePath}/{id}/agent-runs` when agents change the entity's records; else null. */
  agentRuns: string | null;
}

/** One served operation: the method and path the backend answers on, whatever the contract wrote. */
export interface ServedOperationIR {
  operation: Operation;
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  /** Path template with `{id}`, e.g. `/tickets/{id}/state`. */
  path: string;
}

export interface MixinIR {
  fqn: string;
  name: string;
  domain: string;
  file: string | null;
  stdlib: boolean;
  fields: string[];
}

export interface StateIR {
  name: string;
  label: string;
  category: string;
  terminal: boolean;
  color: string | null;
  description: string;
}

export interface GuardIR {
  from: string;
  to: string;
  requireFields: string[];
  condition: { source: string; expr: Expr } | null;
}

export type WorkflowActionIR = { emitEvent: string } | { set: Record<string, unknown> };

export interface SideEffectIR {
  from: string;
  to: string;
  actions: WorkflowActionIR[];
}

export interface TypeOverrideIR {
  field: string;
  /** Value of `field` -> transitions replacing the base ones for the listed source states. */
  overrides: { value: string; transitions: Record<string, string[]> }[];
}

export interface WorkflowIR extends ContractHeaderIR {
  initial: string;
  /** States in declaration order. */
  states: StateIR[];
  /** Source state -> allowed targets, for every state (terminal states map to []). */
  transitions: Record<string, string[]>;
  guards: GuardIR[];
  sideEffects: SideEffectIR[];
  typeOverrides: TypeOverrideIR | null;
  /** Entities governed by this workflow. */
  entities: string[];
}

export type Operation = "list" | "get" | "create" | "update" | "delete" | "transition";

export interface ValidationRuleIR {
  source: string;
  expr: Expr;
  onFail: { status: number; error: string; message: string | null };
}

export type RouteSideEffectIR = { emitEvent: string } | { invoke: string };

export interface EndpointIR {
  operation: Operation;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path as written in the contract. */
  path: string;
  summary: string;
  description: string;
  /** Roles allowed; empty means any authenticated user. Endpoint roles win over global ones. */
  roles: string[];
  requestBody: { requiredFields: string[]; optionalFields: string[] } | null;
  validation: ValidationRuleIR[];
  autoFields: Record<string, ComputedIR>;
  sideEffects: RouteSideEffectIR[];
  response: { status: number; shape: "entity" | "list" | "empty" };
  /** Link name -> path template with `{id}`; always has `self`. */
  hateoas: Record<string, string>;
  /** Whether the contract declared this endpoint (false: a standard endpoint added by the compiler). */
  declared: boolean;
}

export interface RouteIR extends ContractHeaderIR {
  entity: string;
  entityName: string;
  basePath: string;
  /** Roles from `global_behaviors.roles`. */
  roles: string[];
  globalBehaviors: Record<string, unknown>;
  /**
   * One endpoint per standard operation (the `transition` one only when the entity has a state
   * machine), in the order list, get, create, update, delete, transition. Declared endpoints carry
   * their rules; the others are the defaults every Route exposes (docs/contracts.md, "Route").
   */
  endpoints: EndpointIR[];
}

export interface ViewIR {
  type: "table" | "kanban";
  default: boolean;
  columns: string[];
  cardFields: string[];
}

export interface PageIR extends ContractPlaceIR {
  route: string;
  entity: string;
  entityName: string;
  title: string;
  generationTier: "mechanical" | "creative";
  /** Declared views; a page without views gets one table view of the entity's first fields. */
  views: ViewIR[];
  /** Field names of the filter bar. */
  filters: string[];
  dataSources: unknown[];
  displayRules: Record<string, unknown>;
  actions: Record<string, unknown>;
}

export interface AgentIR extends ContractHeaderIR {
  trigger: string;
  inputEntity: string | null;
  inputFields: string[];
  output: Record<string, unknown>;
  /** `output.updates`: the only fields of the input entity the agent may change. */
  updates: string[];
  threshold: number;
  approach: string;
  constraints: string[];
  fallback: AgentFallbackIR;
}

/** Below the threshold, or on any error or timeout: leave the record alone, or set fixed values. */
export type AgentFallbackIR = { action: "leave_unchanged" } | { action: "set"; values: Record<string, unknown> };

export interface InfraIR extends ContractPlaceIR {
  category: string;
  config: Record<string, unknown>;
  envVars: Record<string, string>;
  bootstrap: unknown;
}

export interface AuthUserIR {
  id: string;
  email: string;
  role: string;
  /** Plain text as written in the contract; the generated app hashes it on first start. */
  password: string | null;
}

export interface AuthIR {
  fqn: string;
  provider: "jwt" | "external";
  roles: string[];
  users: AuthUserIR[];
}
