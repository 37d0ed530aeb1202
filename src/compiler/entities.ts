import type { EntitySpec, Fields } from "../contracts/spec-types.generated.js";
import { SOFT_DELETE_MIXIN, STDLIB_MIXINS, SYSTEM_FIELDS } from "../contracts/stdlib.js";
import { compareText } from "../shared/text.js";
import type { Contract, Reporter } from "./context.js";
import { FIELD_TYPES } from "./field-types.js";
import { buildField, presence } from "./fields.js";
import type { EntityIR, FieldIR, MixinIR, WorkflowIR } from "./ir.js";
import { defaultTable, humanize, kebabCase, pascalCase, pluralize, SYSTEM_TABLES } from "./naming.js";

export function buildMixin(reporter: Reporter, c: Contract<"Mixin">): MixinIR {
  const fields = c.spec.fields;
  for (const [name, def] of Object.entries(fields)) {
    buildField(reporter, c, ["spec", "fields", name], name, def, c.fqn, c.name, null);
  }
  return { fqn: c.fqn, name: c.name, domain: c.domain, file: c.loaded.file, stdlib: false, fields: Object.keys(fields) };
}

export function stdlibMixinIR(fqn: string): MixinIR {
  return {
    fqn,
    name: fqn.split("/")[2] ?? fqn,
    domain: "stdlib",
    file: null,
    stdlib: true,
    fields: Object.keys(STDLIB_MIXINS[fqn] ?? {}),
  };
}

/**
 * Composes an entity's effective fields: the implicit `id`, then the fields of each mixin in the
 * order listed, then the entity's own fields (which win over a mixin field of the same name), then
 * the implicit timestamps, then `state` when a workflow governs the entity.
 */
export function buildEntity(
  reporter: Reporter,
  c: Contract<"Entity">,
  userMixins: ReadonlyMap<string, Contract<"Mixin">>,
  workflows: ReadonlyMap<string, WorkflowIR>,
): EntityIR {
  const spec = c.spec;
  const prefix = spec.number_prefix ?? null;
  const mixins = spec.mixins ?? [];
  const own = spec.fields;
  const byName = new Map<string, FieldIR>();
  const add = (f: FieldIR): void => {
    byName.delete(f.name);
    byName.set(f.name, f);
  };
  const sys = (name: keyof typeof SYSTEM_FIELDS): FieldIR =>
    buildField(reporter, null, [], name, SYSTEM_FIELDS[name], "system", c.name, prefix);

  add(sys("id"));
  for (const m of mixins) {
    const defs = STDLIB_MIXINS[m] ?? userMixins.get(m)?.spec.fields ?? {};
    for (const [name, def] of Object.entries(defs)) {
      if (byName.has(name) && name === "id") continue;
      const field = buildField(reporter, null, [], name, def, m, c.name, prefix);
      // The soft-delete marks belong to DELETE alone: a client never sets them on create or update.
      add(m === SOFT_DELETE_MIXIN ? { ...field, writable: false, updatable: false } : field);
    }
  }
  for (const [name, def] of Object.entries(own)) {
    add(buildField(reporter, c, ["spec", "fields", name], name, def, "entity", c.name, prefix));
  }
  // Keep id first even when an entity or mixin redefines it.
  const idField = byName.get("id") as FieldIR;
  byName.delete("id");
  const id = { ...idField, primaryKey: true, writable: false, updatable: false, immutable: true };
  const ordered: FieldIR[] = [{ ...id, ...presence(id) }, ...byName.values()];
  for (const ts of ["created_at", "updated_at"] as const) {
    if (!ordered.some((f) => f.name === ts)) ordered.push(sys(ts));
  }
  const stateMachine = spec.state_machine ?? null;
  const wf = stateMachine ? workflows.get(stateMachine) : undefined;
  if (stateMachine) placeStateField(reporter, c, own, ordered, wf);
  if (prefix && !mixins.includes("mixin/stdlib/identifiable") && !ordered.some((f) => f.computed?.kind === "sequence")) {
    reporter.report(
      c,
      ["spec", "number_prefix"],
      "entity.number_prefix_unused",
      "number_prefix has no effect without a sequence field (compose mixin/stdlib/identifiable)",
      { severity: "warning" },
    );
  }
  const table = entityTable(reporter, c);
  return {
    fqn: c.fqn,
    name: c.name,
    domain: c.domain,
    file: c.loaded.file,
    description: c.meta.description ?? "",
    className: pascalCase(c.name),
    label: humanize(c.name),
    labelPlural: humanize(pluralize(c.name)),
    table,
    basePath: `/${kebabCase(pluralize(c.name))}`,
    numberPrefix: prefix,
    icon: spec.icon ?? null,
    mixins,
    fields: ordered,
    primaryKey: "id",
    stateMachine,
    softDelete: mixins.includes(SOFT_DELETE_MIXIN),
    listTotal: spec.list_total === "counter" ? "counter" : "count",
    searchFields: ordered.filter((f) => FIELD_TYPES[f.type].searchable && !f.primaryKey && f.name !== "state").map((f) => f.name),
    aiIntegration: aiIntegrationOf(spec.ai_integration),
    routes: [],
    pages: [],
    api: null,
  };
}

/**
 * Puts the workflow's `state` field last, replacing any `state` from a mixin; an entity that
 * declares `state` itself is reported, since the workflow owns that column.
 */
function placeStateField(reporter: Reporter, c: Contract<"Entity">, own: Fields, ordered: FieldIR[], wf: WorkflowIR | undefined): void {
  if (own.state !== undefined) {
    reporter.report(
      c,
      ["spec", "fields", "state"],
      "field.reserved",
      "'state' is reserved for the workflow state of an entity with a state_machine",
      { key: true },
    );
  }
  const stateField = ordered.find((f) => f.name === "state");
  const field = workflowStateField(wf);
  if (stateField) ordered.splice(ordered.indexOf(stateField), 1);
  ordered.push(field);
}

/** The `state` field of an entity a workflow governs: its values are the workflow's states. */
function workflowStateField(wf: WorkflowIR | undefined): FieldIR {
  return {
    name: "state",
    type: "string",
    description: "Workflow state",
    required: false,
    immutable: false,
    hasDefault: wf !== undefined,
    default: wf?.initial ?? null,
    format: null,
    enum: wf ? wf.states.map((s) => s.name) : null,
    itemsType: null,
    computed: null,
    constraints: {},
    references: null,
    renamedFrom: null,
    origin: "system",
    primaryKey: false,
    writable: false,
    updatable: false,
    // The app always gives a record a state, the initial one by default.
    nullable: false,
    alwaysPresent: true,
  };
}

/** The entity's table name; a name the generated app uses for its own tables is reported. */
function entityTable(reporter: Reporter, c: Contract<"Entity">): string {
  const spec = c.spec;
  const table = spec.table ?? defaultTable(c.name);
  if (spec.table !== undefined && Object.hasOwn(SYSTEM_TABLES, spec.table)) {
    reporter.report(
      c,
      ["spec", "table"],
      "entity.system_table",
      `table ${JSON.stringify(spec.table)} is the generated app's own (${SYSTEM_TABLES[spec.table]}); choose another name`,
    );
  }
  return table;
}

/** `ai_integration` with every value as a sorted list of agent FQNs (a single FQN is a list of one). */
function aiIntegrationOf(raw: EntitySpec["ai_integration"] = {}): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [event, value] of Object.entries(raw).sort(([a], [b]) => compareText(a, b))) {
    const agents = typeof value === "string" ? [value] : value;
    out[event] = [...new Set(agents)].sort(compareText);
  }
  return out;
}

/** `display` of every reference must name a field of the referenced entity. */
export function checkReferenceDisplays(
  reporter: Reporter,
  c: Contract<"Entity">,
  entity: EntityIR,
  entities: ReadonlyMap<string, EntityIR>,
): void {
  for (const f of entity.fields) {
    if (!f.references || f.origin !== "entity") continue;
    const target = entities.get(f.references.entity);
    if (!target) continue;
    if (f.references.display && !target.fields.some((t) => t.name === f.references?.display)) {
      reporter.notOneOf(
        c,
        ["spec", "fields", f.name, "references", "display"],
        f.references.display,
        target.fields.map((t) => t.name),
        "field",
      );
    }
  }
}
