import { valueFitsType } from "../compiler/fields.js";
import {
  defaultTable as compilerDefaultTable,
  humanize,
  kebabCase,
  limitIdentifier,
  MAX_IDENTIFIER_BYTES,
  pluralize,
} from "../compiler/naming.js";
import { API_VERSION } from "../contracts/fqn.js";
import { compareText } from "../shared/text.js";
import type {
  ContractType,
  FactKind,
  ForeignKey,
  ImportField,
  ImportModel,
  ImportNote,
  ImportOperation,
  ImportTable,
  OnDelete,
  SourceLocation,
} from "./model.js";
import { defaultTable, entityName, RESERVED_FIELD_NAMES, snakeCase, uniqueNames } from "./naming.js";
import { breakCycles, joinTableEnds, pickDisplay, type RefEdge } from "./relations.js";
import { planRoute, type RoutePlan, routeSpec, settleBasePaths } from "./routes.js";
import { inferWorkflow } from "./workflows.js";

export type ContractKind = "Entity" | "Workflow" | "Route" | "Page";

/** A contract the import would write, before validation. */
export interface PlannedContract {
  kind: ContractKind;
  name: string;
  fqn: string;
  /** Path relative to the domain directory: `entities/order.contract.yaml`. */
  file: string;
  data: Record<string, unknown>;
  /** The entity this contract belongs to (its own name for an entity): review and writing go by entity. */
  entity: string;
  source?: SourceLocation;
  /** JSON pointers of what an LLM added, for the summary. */
  fromLlm?: string[];
}

export interface ConvertOptions {
  domain: string;
  /** `operations`: routes for the model's API operations; `all`: a route per entity; `none`. */
  routes: "operations" | "all" | "none";
  pages: boolean;
  workflows: boolean;
}

/** How the conversion named a source table and its columns (convert.ts fills it). */
export interface TableTrace {
  entity: string;
  /** Source column -> the field name it was given (a name absent from the entity's fields was absorbed or dropped). */
  columns: Record<string, string>;
  /** Fields a mixin, the implicit id or a workflow stand for: carried, though not among the fields. */
  absorbed: Record<string, string>;
}

export type ConversionTrace = Record<string, TableTrace>;

export interface Conversion {
  contracts: PlannedContract[];
  notes: ImportNote[];
  /** How each source table and column was named, for the fidelity report. */
  trace: ConversionTrace;
}

type FieldDef = Record<string, unknown>;

const KIND_DIRS: Record<ContractKind, string> = { Entity: "entities", Workflow: "workflows", Route: "routes", Page: "pages" };

export function plannedContract(
  kind: ContractKind,
  name: string,
  domain: string,
  entity: string,
  spec: Record<string, unknown>,
  description?: string,
  source?: SourceLocation,
): PlannedContract {
  const metadata: Record<string, unknown> = { name, domain };
  if (description) metadata.description = description;
  const c: PlannedContract = {
    kind,
    name,
    fqn: `${kind.toLowerCase()}/${domain}/${name}`,
    file: `${KIND_DIRS[kind]}/${name}.contract.yaml`,
    data: { apiVersion: API_VERSION, kind, metadata, spec },
    entity,
  };
  if (source) c.source = source;
  return c;
}

/**
 * The neutral model -> contracts: names normalised, keys and timestamps recognised as the implicit
 * id and stdlib mixins, foreign keys turned into references with a display, dependency cycles
 * broken, status enums turned into workflows when confident, routes for the API's operations.
 * Every departure from the source becomes a note; nothing is dropped silently.
 */
export function convertModel(model: ImportModel, options: ConvertOptions): Conversion {
  const notes: ImportNote[] = [...model.notes];
  const { domain } = options;
  const tables = [...model.tables];
  const entityNames = nameEntities(tables, notes);
  const entityOf = entityLookup(tables, entityNames);

  // Fields first (names, types, mixins), references after, once every entity's fields are known.
  const built = new Map<string, BuiltTable>();
  for (const t of tables) {
    const entity = entityNames.get(t.name) as string;
    built.set(entity, buildFields(t, entity, notes));
  }

  // Workflows before references: a status field that becomes the workflow's state is no display.
  const workflows = extractWorkflows(built, options, notes);
  const empty = emptyEntities(built, notes);
  const { refs, onDeletes } = collectReferences(built, entityOf, empty, notes);
  applyReferences(built, refs, onDeletes, domain, notes);
  noteJoinTables(built, entityOf, notes);
  const contracts = emitContracts(model, options, built, workflows, empty, entityOf, notes);
  const trace: ConversionTrace = {};
  for (const [entity, b] of built)
    trace[b.table.name] = { entity, columns: Object.fromEntries(b.sourceNames), absorbed: Object.fromEntries(b.absorbed) };
  return { contracts, notes, trace };
}

/** One source table's fields as buildFields made them, with how its columns were named. */
interface BuiltTable {
  table: ImportTable;
  fields: Map<string, FieldDef>;
  mixins: string[];
  sourceNames: Map<string, string>;
  absorbed: Map<string, string>;
}

/** Entity names for the tables, unique after normalisation; each collision is noted. */
function nameEntities(tables: ImportTable[], notes: ImportNote[]): Map<string, string> {
  const { names: entityNames, collisions } = uniqueNames(
    tables.map((t) => t.name),
    entityName,
  );
  for (const c of collisions) {
    notes.push({
      kind: "changed",
      subject: c.raw,
      reason: `name collides with '${c.clashesWith}' after normalisation; entity named '${c.name}'`,
      fact: "table",
    });
  }
  return entityNames;
}

/** Resolves a table reference (by model name or SQL table name, any case) to its entity name. */
function entityLookup(tables: ImportTable[], entityNames: Map<string, string>): (tableRef: string) => string | undefined {
  const byTable = new Map<string, ImportTable>();
  for (const t of tables) {
    byTable.set(t.name, t);
    if (t.tableName && !byTable.has(t.tableName)) byTable.set(t.tableName, t);
  }
  return (tableRef: string): string | undefined => {
    const t =
      byTable.get(tableRef) ??
      tables.find((x) => x.name.toLowerCase() === tableRef.toLowerCase() || x.tableName?.toLowerCase() === tableRef.toLowerCase());
    return t ? entityNames.get(t.name) : undefined;
  };
}

/**
 * Status-like enums become workflows (when enabled): the field leaves the entity, which then owns
 * `state`; a column already named `state` is renamed. Returns the workflow contract per entity.
 */
function extractWorkflows(built: Map<string, BuiltTable>, options: ConvertOptions, notes: ImportNote[]): Map<string, PlannedContract> {
  const { domain } = options;
  const workflows = new Map<string, PlannedContract>();
  for (const [entity, b] of built) {
    const wf = options.workflows ? inferWorkflow(entity, b.fields) : undefined;
    if (!wf) continue;
    workflows.set(
      entity,
      plannedContract(
        "Workflow",
        wf.name,
        domain,
        entity,
        wf.spec,
        `Lifecycle of ${humanize(entity).toLowerCase()}, from its '${wf.field}' values`,
        b.table.location,
      ),
    );
    b.fields.delete(wf.field);
    notes.push({
      kind: "changed",
      subject: `${entity}.${wf.field}`,
      reason: `the column is the workflow's 'state' column`,
      fact: "column",
    });
    for (const [raw, n] of b.sourceNames) if (n === wf.field) b.absorbed.set(raw, `workflow ${wf.name}`);
    notes.push({
      kind: "changed",
      subject: `${entity}.${wf.field}`,
      reason: `status-like enum became workflow ${wf.name} (the entity's 'state')${wf.lowercased ? "; its UPPER_CASE values are lower-case states" : ""}`,
    });
    // The workflow owns `state`; a column of that name is kept under another name.
    const clash = b.fields.get("state");
    if (clash) {
      b.fields.delete("state");
      b.fields.set("state_value", clash);
      for (const [raw, n] of b.sourceNames) if (n === "state") b.sourceNames.set(raw, "state_value");
      notes.push({
        kind: "changed",
        subject: `${entity}.state`,
        reason: "'state' is the workflow's; the column is named 'state_value'",
        fact: "column",
      });
    }
  }
  return workflows;
}

/**
 * An entity needs a field of its own: one with nothing besides the id and timestamps (a Django
 * model of only inherited timestamps, a bare join row) is left out, and references to it stay plain.
 */
function emptyEntities(built: Map<string, BuiltTable>, notes: ImportNote[]): Set<string> {
  const empty = new Set([...built].filter(([, b]) => b.fields.size === 0).map(([e]) => e));
  for (const e of empty) {
    notes.push({
      kind: "skipped",
      subject: e,
      reason: "no fields of its own besides the id and timestamps; a contract entity needs one, so it is left out",
      fact: "table",
      location: (built.get(e) as { table: ImportTable }).table.location,
    });
  }
  return empty;
}

/**
 * The foreign keys that can be contract references (single column, to an entity kept, on a field
 * kept), with their on_delete rules; every other foreign key is noted and stays a plain field.
 */
function collectReferences(
  built: Map<string, BuiltTable>,
  entityOf: (tableRef: string) => string | undefined,
  empty: Set<string>,
  notes: ImportNote[],
): { refs: RefEdge[]; onDeletes: Map<string, OnDelete> } {
  const refs: RefEdge[] = [];
  const onDeletes = new Map<string, OnDelete>();
  for (const [entity, b] of built) {
    const t = b.table;
    for (const fk of t.foreignKeys) {
      const found = entityOf(fk.table);
      const target = found !== undefined && !empty.has(found) ? found : undefined;
      const cols = fk.columns.map((c) => b.sourceNames.get(c) ?? snakeCase(c));
      if (!target) {
        notes.push({
          kind: "skipped",
          subject: `${entity}.${cols.join(", ")}`,
          reason: `references '${fk.table}', which is ${found ? "left out (no fields of its own)" : "not in the input"}; kept as a plain field`,
          fact: "reference",
          location: t.location,
        });
        continue;
      }
      if (fk.columns.length !== 1) {
        notes.push({
          kind: "skipped",
          subject: `${entity}.(${cols.join(", ")})`,
          reason: `composite foreign key to ${target} cannot be a contract reference (references point at the id); the columns are kept as plain fields`,
          fact: "reference",
          location: t.location,
        });
        continue;
      }
      const field = cols[0] as string;
      const def = b.fields.get(field);
      if (!def) {
        // The column became the implicit id (or a mixin's field): a key that is also a reference
        // (Supabase's `id uuid references auth.users`) cannot point anywhere in a contract.
        notes.push({
          kind: "skipped",
          subject: `${entity}.${field}`,
          reason: `foreign key to ${fk.table} on '${fk.columns[0]}', which is the entity's implicit id or a mixin's field; the reference is left out`,
          location: t.location,
          fact: "reference",
        });
        continue;
      }
      const targetTable = built.get(target)?.table;
      const targetKey = targetTable?.primaryKey.length === 1 ? targetTable.primaryKey[0] : undefined;
      if (fk.targetColumns.length === 1 && targetKey && fk.targetColumns[0] !== targetKey) {
        notes.push({
          kind: "changed",
          subject: `${entity}.${field}`,
          reason: `references ${fk.table}.${fk.targetColumns[0]}, not its key; a contract reference points at the record (its id)`,
          fact: "reference",
          location: t.location,
        });
      }
      if (def.type !== "uuid") {
        notes.push({
          kind: "changed",
          subject: `${entity}.${field}`,
          reason: `${String(def.type)} foreign key becomes a uuid reference to ${target} (every contract entity has a UUID id)`,
          fact: "type",
        });
      }
      refs.push({ from: entity, field, to: target, required: def.required === true });
      const rule = onDeleteRule(fk, def.required === true, `${entity}.${field}`, notes, t.location);
      if (rule !== undefined) onDeletes.set(`${entity}.${field}`, rule);
    }
  }
  return { refs, onDeletes };
}

/**
 * Reference fields become uuids; dependency cycles are broken (those fields stay plain uuids), the
 * rest get `references` with a display picked from the target's fields and their on_delete.
 */
function applyReferences(
  built: Map<string, BuiltTable>,
  refs: RefEdge[],
  onDeletes: Map<string, OnDelete>,
  domain: string,
  notes: ImportNote[],
): void {
  const dropped = new Set(breakCycles([...built.keys()].sort(compareText), refs));
  for (const r of dropped) {
    notes.push({
      kind: "changed",
      subject: `${r.from}.${r.field}`,
      reason: `reference to ${r.to} dropped to break a dependency cycle (${r.from} and ${r.to} reference each other); the field stays a plain uuid`,
      fact: "reference",
    });
  }
  for (const r of refs) {
    const b = built.get(r.from);
    const def = b?.fields.get(r.field);
    if (!b || !def) continue;
    delete def.enum;
    delete def.constraints;
    delete def.default;
    delete def.computed;
    def.type = "uuid";
    if (dropped.has(r)) continue;
    const targetFields = [...(built.get(r.to)?.fields.entries() ?? [])].map(([name, d]) => ({
      name,
      type: String(d.type),
      required: d.required === true,
    }));
    const display = pickDisplay(targetFields);
    const references: Record<string, unknown> = { entity: `entity/${domain}/${r.to}` };
    if (display) references.display = display;
    const onDelete = onDeletes.get(`${r.from}.${r.field}`);
    if (onDelete !== undefined) references.on_delete = onDelete;
    def.references = references;
  }
}

/** A many-to-many join table is kept as an entity with two references; the note says so. */
function noteJoinTables(built: Map<string, BuiltTable>, entityOf: (tableRef: string) => string | undefined, notes: ImportNote[]): void {
  for (const [entity, b] of built) {
    const ends = joinTableEnds(b.table);
    if (ends) {
      notes.push({
        kind: "changed",
        subject: entity,
        reason: `many-to-many join table between ${entityOf(ends[0]) ?? ends[0]} and ${entityOf(ends[1]) ?? ends[1]}; kept as an entity with two references`,
        fact: "primary_key",
      });
    }
  }
}

/**
 * The contracts, entity by entity in name order (its workflow, the entity, its page), then the
 * Routes once their base paths are settled together; operations of a left-out entity are noted.
 */
function emitContracts(
  model: ImportModel,
  options: ConvertOptions,
  built: Map<string, BuiltTable>,
  workflows: Map<string, PlannedContract>,
  empty: Set<string>,
  entityOf: (tableRef: string) => string | undefined,
  notes: ImportNote[],
): PlannedContract[] {
  const { domain } = options;
  const contracts: PlannedContract[] = [];
  const routes: { plan: RoutePlan; source: SourceLocation }[] = [];
  const operationsByEntity = groupOperations(model.operations, entityOf, notes);
  for (const [entity, b] of [...built].sort(([a], [c]) => compareText(a, c))) {
    if (empty.has(entity)) {
      for (const op of operationsByEntity.get(entity) ?? [])
        notes.push({
          kind: "skipped",
          subject: `${op.method.toUpperCase()} ${op.path}`,
          reason: `its entity ${entity} is left out (no fields of its own); not served`,
          location: op.location,
          fact: "operation",
        });
      continue;
    }
    const t = b.table;
    const spec = entitySpec(model, entity, b, notes);
    const workflowContract = workflows.get(entity);
    if (workflowContract) spec.state_machine = workflowContract.fqn;
    spec.fields = Object.fromEntries(b.fields);
    if (workflowContract) contracts.push(workflowContract);
    contracts.push(plannedContract("Entity", entity, domain, entity, spec, t.description, t.location));
    const ops = options.routes === "none" ? [] : (operationsByEntity.get(entity) ?? []);
    let route: RoutePlan | undefined;
    if (options.routes === "all" || (options.routes === "operations" && ops.length > 0)) route = planRoute(entity, ops, notes);
    // A Page needs its entity served (the compiler refuses it otherwise): the standard endpoints.
    if (!route && (options.pages || options.routes === "all")) route = planRoute(entity, [], notes);
    if (route) routes.push({ plan: route, source: ops[0]?.location ?? t.location });
    if (options.pages) contracts.push(buildPage(entity, domain, b.fields, workflowContract !== undefined));
  }
  // Base paths are settled together: two Routes never share one.
  settleBasePaths(
    routes.map((r) => r.plan),
    notes,
  );
  for (const r of routes)
    contracts.push({
      ...plannedContract("Route", `${r.plan.entity}_api`, domain, r.plan.entity, routeSpec(r.plan, domain)),
      source: r.source,
    });
  return contracts;
}

/** The start of an entity's spec: its table name when it must be explicit (or shortened), its mixins. */
function entitySpec(model: ImportModel, entity: string, b: BuiltTable, notes: ImportNote[]): Record<string, unknown> {
  const t = b.table;
  const spec: Record<string, unknown> = {};
  const table = t.tableName ?? t.name;
  if (model.format !== "openapi" && snakeCase(table) === table && table !== defaultTable(entity)) spec.table = table;
  const effective = typeof spec.table === "string" ? spec.table : compilerDefaultTable(entity);
  if (Buffer.byteLength(effective, "utf8") > MAX_IDENTIFIER_BYTES) {
    // PostgreSQL would cut the name (the compiler refuses it): a shortened, still unique, table name.
    spec.table = limitIdentifier(effective);
    notes.push({
      kind: "changed",
      subject: t.name,
      reason: `table name ${effective} is longer than PostgreSQL's ${MAX_IDENTIFIER_BYTES} bytes: the table is ${spec.table}`,
      location: t.location,
      fact: "table",
    });
  }
  if (b.mixins.length > 0) spec.mixins = b.mixins;
  return spec;
}

/**
 * The contract's `on_delete` for a foreign key, when it differs from the contract default
 * (restrict for a required field, set_null for an optional one); what cannot be carried is noted.
 */
function onDeleteRule(
  fk: ForeignKey,
  required: boolean,
  subject: string,
  notes: ImportNote[],
  location: SourceLocation,
): OnDelete | undefined {
  if (fk.onDelete === undefined) return undefined;
  let rule = fk.onDelete;
  if (rule === "set_null" && required) {
    notes.push({
      kind: "changed",
      subject,
      reason: `ON DELETE ${fk.onDeleteSource ?? "SET NULL"} on a required column cannot clear it; on_delete is restrict`,
      fact: "on_delete",
      location,
    });
    rule = "restrict";
  } else if (/^set[ _]?default$/i.test(fk.onDeleteSource ?? "")) {
    notes.push({
      kind: "changed",
      subject,
      reason: `ON DELETE ${fk.onDeleteSource} has no contract equivalent; on_delete is restrict`,
      fact: "on_delete",
      location,
    });
  }
  return rule === (required ? "restrict" : "set_null") ? undefined : rule;
}

function buildFields(t: ImportTable, entity: string, notes: ImportNote[]): BuiltTable {
  const subject = (f: string): string => `${entity}.${f}`;
  const pk = t.primaryKey;
  const { sourceNames, byName } = fieldNames(t, entity, notes);
  if (pk.length > 1 && !joinTableEnds(t)) {
    notes.push({
      kind: "changed",
      subject: entity,
      reason: `composite primary key (${pk.join(", ")}) is not expressible; the entity gets a UUID id and the key columns stay required fields`,
      fact: "primary_key",
      location: t.location,
    });
  }
  const mixins: string[] = [];
  const drop = new Set<string>();
  const recognised: string[] = [];
  implicitId(t, entity, byName, sourceNames, { mixins, drop, recognised }, notes);
  stdlibMixins(t, entity, byName, { mixins, drop, recognised }, notes);
  if (recognised.length > 0) notes.push({ kind: "changed", subject: entity, reason: `recognised ${recognised.join("; ")}` });
  absorbedDifferences(byName, drop, entity, notes, t.location);

  const fields = new Map<string, FieldDef>();
  for (const [name0, f] of byName) {
    if (drop.has(name0)) continue;
    const name = name0 === "id" ? "source_id" : name0;
    const isKey = pk.length === 1 && pk[0] === f.name;
    if (f.arrayOf) {
      notes.push({
        kind: "changed",
        subject: subject(name),
        reason: `a list of ${f.arrayOf} records is not a contract reference; kept as an array of objects`,
        fact: "type",
        location: f.location ?? t.location,
      });
    }
    fields.set(name, fieldDefinition(f, isKey || pk.includes(f.name), subject(name), notes, t.location));
  }
  // What the implicit id and the mixins stand for: carried, though not among the fields.
  const absorbed = new Map<string, string>();
  for (const [raw, n] of sourceNames)
    if (drop.has(n)) absorbed.set(raw, n === "id" ? "the implicit id" : mixins.join(", ") || `the implicit ${n}`);
  return {
    table: t,
    fields,
    mixins,
    sourceNames: new Map([...sourceNames].map(([raw, n]) => [raw, n === "id" && !drop.has("id") ? "source_id" : n])),
    absorbed,
  };
}

/** What the implicit id and the stdlib mixins take from a table's columns. */
interface Recognition {
  mixins: string[];
  /** Field names that leave the entity's fields (carried by the id or a mixin). */
  drop: Set<string>;
  /** For the entity's "recognised" note. */
  recognised: string[];
}

/**
 * Field names for a table's columns: snake_case, unique, and off the names the generated app
 * uses itself; each rename is noted. Returns the source -> field names and the columns by field name.
 */
function fieldNames(
  t: ImportTable,
  entity: string,
  notes: ImportNote[],
): { sourceNames: Map<string, string>; byName: Map<string, ImportField> } {
  const subject = (f: string): string => `${entity}.${f}`;
  const { names: sourceNames, collisions } = uniqueNames(
    t.fields.map((f) => f.name),
    (raw) => {
      const s = snakeCase(raw);
      return RESERVED_FIELD_NAMES.has(s) && !/^(status|state)$/i.test(raw) ? `${s}_value` : s;
    },
  );
  for (const c of collisions)
    notes.push({
      kind: "changed",
      subject: subject(c.raw),
      reason: `collides with '${c.clashesWith}' after normalisation; field named '${c.name}'`,
      fact: "column",
      location: t.location,
    });
  const byName = new Map<string, ImportField>();
  for (const f of t.fields) byName.set(sourceNames.get(f.name) as string, f);
  for (const f of t.fields) {
    const s = snakeCase(f.name);
    if (RESERVED_FIELD_NAMES.has(s) && sourceNames.get(f.name) === `${s}_value`)
      notes.push({
        kind: "changed",
        subject: subject(f.name),
        reason: `'${s}' is a name the generated app uses itself; the field is named '${s}_value'`,
        location: f.location ?? t.location,
        fact: "column",
      });
  }
  return { sourceNames, byName };
}

/**
 * The implicit id: a single key column called id, whatever its type (contracts use UUIDs), with
 * `number` making it identifiable; another `id` or a single key column is kept and noted.
 */
function implicitId(
  t: ImportTable,
  entity: string,
  byName: Map<string, ImportField>,
  sourceNames: Map<string, string>,
  r: Recognition,
  notes: ImportNote[],
): void {
  const subject = (f: string): string => `${entity}.${f}`;
  const pk = t.primaryKey;
  const { mixins, drop, recognised } = r;
  const has = (n: string): boolean => byName.has(n);
  const idField = byName.get("id");
  if (idField && (pk.length === 0 || (pk.length === 1 && sourceNames.get(pk[0] as string) === "id"))) {
    drop.add("id");
    if (idField.type !== "uuid") {
      notes.push({
        kind: "changed",
        subject: subject("id"),
        reason: `${idField.sourceType ?? idField.type} primary key becomes the implicit UUID id`,
        fact: "type",
        location: idField.location ?? t.location,
      });
    }
    if (has("number") && byName.get("number")?.type === "string") {
      mixins.push("mixin/stdlib/identifiable");
      drop.add("number");
      recognised.push("id, number -> mixin/stdlib/identifiable");
    }
  } else if (idField) {
    notes.push({
      kind: "changed",
      subject: subject("id"),
      reason: "an 'id' that is not the primary key is renamed 'source_id' (every entity has its own UUID id)",
      fact: "column",
      location: t.location,
    });
  } else if (pk.length === 1) {
    notes.push({
      kind: "changed",
      subject: subject(sourceNames.get(pk[0] as string) ?? String(pk[0])),
      reason:
        "primary key kept as a required field; the entity's id is an implicit UUID, and the column's uniqueness is not kept (a contract cannot say unique)",
      fact: "primary_key",
      location: t.location,
    });
  }
}

/** Timestamps, audit columns, soft deletion and tags recognised as the stdlib mixins (or implicit timestamps). */
function stdlibMixins(t: ImportTable, entity: string, byName: Map<string, ImportField>, r: Recognition, notes: ImportNote[]): void {
  const subject = (f: string): string => `${entity}.${f}`;
  const { mixins, drop, recognised } = r;
  const has = (n: string): boolean => byName.has(n);
  const isTime = (n: string): boolean => ["datetime", "date"].includes(byName.get(n)?.type ?? "");
  if (has("created_at") && has("updated_at") && isTime("created_at") && isTime("updated_at")) {
    if (has("created_by") && has("updated_by")) {
      mixins.push("mixin/stdlib/auditable");
      for (const n of ["created_at", "updated_at", "created_by", "updated_by"]) drop.add(n);
      recognised.push("created_at, updated_at, created_by, updated_by -> mixin/stdlib/auditable");
    } else {
      mixins.push("mixin/stdlib/timestamped");
      drop.add("created_at");
      drop.add("updated_at");
      recognised.push("created_at, updated_at -> mixin/stdlib/timestamped");
    }
  } else {
    for (const n of ["created_at", "updated_at"]) {
      if (has(n)) {
        drop.add(n);
        recognised.push(`${n} -> the implicit ${n}`);
      }
    }
  }
  if (has("deleted_at") && isTime("deleted_at")) {
    mixins.push("mixin/stdlib/soft_deletable");
    for (const n of ["deleted_at", "deleted_by", "is_deleted"]) if (has(n)) drop.add(n);
    recognised.push("deleted_at -> mixin/stdlib/soft_deletable");
  }
  const tags = byName.get("tags");
  if (tags && tags.type === "array" && (tags.itemsType ?? "string") === "string") {
    mixins.push("mixin/stdlib/taggable");
    if (tags.required)
      notes.push({
        kind: "changed",
        subject: subject(tags.name),
        reason: "the taggable mixin's tags are optional (an empty list when left out)",
        location: tags.location ?? t.location,
        fact: "nullability",
      });
    drop.add("tags");
    recognised.push("tags -> mixin/stdlib/taggable");
  }
}

const NUMERIC = new Set<ContractType>(["integer", "number"]);
const TEXTUAL = new Set<ContractType>(["string", "text", "email", "uuid"]);

function fieldDefinition(f: ImportField, key: boolean, subject: string, notes: ImportNote[], fallback: SourceLocation): FieldDef {
  const location = f.location ?? fallback;
  const def: FieldDef = { type: f.type };
  if (f.description) def.description = f.description.trim();
  let required = f.required === true || key;
  if (f.generated === "now" && (f.type === "datetime" || f.type === "date")) {
    def.computed = "now";
    required = false;
    if (f.required !== true && !key) nowIsNotNull(subject, notes, location);
  } else if (f.generated === "now_on_update" && (f.type === "datetime" || f.type === "date")) {
    def.computed = "now_on_update";
    required = false;
    if (f.required !== true && !key) nowIsNotNull(subject, notes, location);
  } else if (f.generated === "uuid" && (f.type === "uuid" || f.type === "string")) {
    def.computed = "uuid";
    required = false;
  } else if (f.generated === "increment") {
    notes.push({
      kind: "changed",
      subject,
      reason: "auto-increment column kept as a plain integer (sequences are for the identifiable mixin's number)",
      fact: "default",
      location,
    });
    required = false;
  }
  if (f.type === "integer" && typeof f.default === "number" && Number.isInteger(f.default) && !Number.isSafeInteger(f.default)) {
    // A 64-bit "no limit" (DigitalOcean's Kafka flush_ms: 9223372036854775807) is not an exact JSON
    // number; the contract keeps the largest exact one, as it does for bounds.
    const kept = Math.sign(f.default) * Number.MAX_SAFE_INTEGER;
    notes.push({
      kind: "changed",
      subject,
      reason: `default ${f.default} is beyond the exact integers of JSON (2^53 - 1); kept as ${kept}`,
      fact: "default",
      location,
    });
    f = { ...f, default: kept };
  }
  if (f.default !== undefined && def.computed === undefined) {
    if (defaultFits(f.default, f.type, f.enum)) {
      def.default = f.default;
      required = false;
    } else {
      notes.push({
        kind: "skipped",
        subject,
        reason: `default ${JSON.stringify(f.default)} does not fit a ${f.type} field; left out`,
        fact: "default",
        location,
      });
    }
  }
  if (required) def.required = true;
  else if ((f.required === true || key) && def.computed !== "now" && def.computed !== "now_on_update") {
    // The generated schema makes a column NOT NULL only for a required field, and a field with a
    // default (or filled by the database) is not required: the column then accepts NULL.
    notes.push({
      kind: "changed",
      subject,
      reason: "NOT NULL column with a default is an optional field (the default fills it); the generated column accepts NULL",
      location,
      fact: "nullability",
    });
  }
  if (f.format && !["date-time", "date", "uuid", "email"].includes(f.format)) def.format = f.format;
  if (f.enum && f.enum.length > 0) {
    const fits = f.enum.filter((v) =>
      f.type === "integer" ? Number.isInteger(v) : NUMERIC.has(f.type) ? typeof v === "number" : typeof v === "string",
    );
    if (fits.length === f.enum.length && f.type !== "boolean" && f.type !== "array" && f.type !== "object") def.enum = [...new Set(f.enum)];
    else notes.push({ kind: "skipped", subject, reason: `enum values do not fit a ${f.type} field; left out`, location, fact: "enum" });
  }
  if (f.type === "array") def.items_type = f.itemsType ?? "string";
  const constraints = fieldConstraints(f, subject, notes, location);
  if (Object.keys(constraints).length > 0) def.constraints = constraints;
  if (f.unique)
    notes.push({
      kind: "skipped",
      subject,
      reason: "unique constraint is not expressible in a contract; left out",
      location,
      fact: "unique",
    });
  return def;
}

/**
 * The source's constraints that fit the field's type (min/max for numbers, lengths and a
 * JavaScript pattern for text); an impossible min > max pair is left out, a foreign pattern noted.
 */
function fieldConstraints(f: ImportField, subject: string, notes: ImportNote[], location: SourceLocation): Record<string, unknown> {
  const c = f.constraints ?? {};
  const constraints: Record<string, unknown> = {};
  if (NUMERIC.has(f.type)) {
    if (c.min !== undefined) constraints.min = c.min;
    if (c.max !== undefined) constraints.max = c.max;
  }
  if (TEXTUAL.has(f.type) && f.type !== "uuid") {
    if (c.minLength !== undefined && c.minLength > 0) constraints.minLength = c.minLength;
    if (c.maxLength !== undefined) constraints.maxLength = c.maxLength;
    if (c.pattern !== undefined && validPattern(c.pattern)) constraints.pattern = c.pattern;
    else if (c.pattern !== undefined)
      notes.push({
        kind: "skipped",
        subject,
        reason: `pattern ${JSON.stringify(c.pattern)} is not a JavaScript regular expression; left out`,
        fact: "check",
        location,
      });
  }
  if (typeof constraints.min === "number" && typeof constraints.max === "number" && constraints.min > constraints.max) {
    delete constraints.min;
    delete constraints.max;
  }
  return constraints;
}

/**
 * The columns a mixin or the implicit timestamps stand for are generated as the mixin says
 * (timestamps TIMESTAMPTZ NOT NULL DEFAULT now(), tags a list defaulting to []): where the source
 * said otherwise, one note per fact, so the judge of the catalogs finds no silent difference.
 */
function absorbedDifferences(
  byName: ReadonlyMap<string, ImportField>,
  drop: ReadonlySet<string>,
  entity: string,
  notes: ImportNote[],
  location: SourceLocation,
): void {
  const note = (n: string, fact: FactKind, reason: string): void => {
    notes.push({ kind: "changed", subject: `${entity}.${n}`, reason, location: byName.get(n)?.location ?? location, fact });
  };
  for (const n of ["created_at", "updated_at"]) {
    const f = byName.get(n);
    if (!f || !drop.has(n)) continue;
    if (f.type !== "datetime") note(n, "type", `${f.sourceType ?? f.type} ${n} becomes the implicit ${n}, a timestamp with time zone`);
    if (f.required !== true) note(n, "nullability", `nullable ${n} becomes the implicit ${n}, NOT NULL (the app fills it)`);
    if (f.generated !== "now" && f.generated !== "now_on_update")
      note(
        n,
        "default",
        `${n} gets the implicit ${n}'s DEFAULT now()${f.default !== undefined ? ` instead of ${JSON.stringify(f.default)}` : ""}`,
      );
  }
  const tags = byName.get("tags");
  if (tags && drop.has("tags") && !Array.isArray(tags.default))
    note("tags", "default", "tags become the taggable mixin's, defaulting to an empty list");
}

/** A time the app fills is always there: the generated column is NOT NULL though the source allowed NULL. */
function nowIsNotNull(subject: string, notes: ImportNote[], location: SourceLocation): void {
  notes.push({
    kind: "changed",
    subject,
    reason: "a nullable column filled with the current time becomes a computed field; the generated column is NOT NULL",
    location,
    fact: "nullability",
  });
}

function validPattern(p: string): boolean {
  try {
    new RegExp(p, "u");
    return true;
  } catch {
    return false;
  }
}

function defaultFits(value: unknown, type: ContractType, values: ImportField["enum"]): boolean {
  if (values && values.length > 0 && !values.includes(value as string | number)) return false;
  return valueFitsType(value, type);
}

/** Operations grouped by the entity they serve; those with no entity are noted. */
function groupOperations(
  ops: readonly ImportOperation[],
  entityOf: (t: string) => string | undefined,
  notes: ImportNote[],
): Map<string, ImportOperation[]> {
  const out = new Map<string, ImportOperation[]>();
  for (const op of ops) {
    const entity = op.table ? entityOf(op.table) : undefined;
    if (!entity) {
      notes.push({
        kind: "skipped",
        subject: `${op.method} ${op.path}`,
        reason: "no entity found for this operation (no schema it returns or accepts); not served",
        location: op.location,
        fact: "operation",
      });
      continue;
    }
    const list = out.get(entity) ?? [];
    list.push(op);
    out.set(entity, list);
  }
  return out;
}

function buildPage(entity: string, domain: string, fields: ReadonlyMap<string, FieldDef>, hasWorkflow: boolean): PlannedContract {
  const columns = [...fields]
    .filter(([, d]) => d.type !== "object" && d.type !== "array" && d.type !== "text")
    .slice(0, 5)
    .map(([n]) => n);
  const views: Record<string, unknown>[] = [];
  if (hasWorkflow) views.push({ type: "kanban", default: true, card_fields: columns.slice(0, 3) });
  views.push(hasWorkflow ? { type: "table", columns } : { type: "table", default: true, columns });
  const spec = {
    route: `/${kebabCase(pluralize(entity))}`,
    entity: `entity/${domain}/${entity}`,
    generation_tier: "mechanical",
    title: humanize(pluralize(entity)),
    views,
  };
  return plannedContract("Page", pluralize(entity), domain, entity, spec);
}
