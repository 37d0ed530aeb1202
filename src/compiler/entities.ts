import { compareText } from "../contracts/findings.js";
import { SOFT_DELETE_MIXIN, STDLIB_MIXINS, SYSTEM_FIELDS } from "../contracts/stdlib.js";
import type { Contract, Reporter } from "./context.js";
import { asRecord, asString, asStringArray } from "./context.js";
import { buildField } from "./fields.js";
import type { EntityIR, FieldIR, MixinIR, WorkflowIR } from "./ir.js";
import { defaultTable, humanize, kebabCase, pascalCase, pluralize, SYSTEM_TABLES } from "./naming.js";

export function buildMixin(reporter: Reporter, c: Contract): MixinIR {
  const fields = asRecord(c.spec.fields);
  for (const [name, def] of Object.entries(fields)) {
    buildField(reporter, c, ["spec", "fields", name], name, asRecord(def), c.fqn, c.name, null);
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
  c: Contract,
  userMixins: ReadonlyMap<string, Contract>,
  workflows: ReadonlyMap<string, WorkflowIR>,
): EntityIR {
  const spec = c.spec;
  const prefix = typeof spec.number_prefix === "string" ? spec.number_prefix : null;
  const mixins = asStringArray(spec.mixins);
  const own = asRecord(spec.fields);
  const byName = new Map<string, FieldIR>();
  const add = (f: FieldIR): void => {
    byName.delete(f.name);
    byName.set(f.name, f);
  };
  const sys = (name: string): FieldIR => buildField(reporter, null, [], name, SYSTEM_FIELDS[name] ?? {}, "system", c.name, prefix);

  add(sys("id"));
  for (const m of mixins) {
    const defs = STDLIB_MIXINS[m] ?? asRecord(userMixins.get(m)?.spec.fields);
    for (const [name, def] of Object.entries(defs)) {
      if (byName.has(name) && name === "id") continue;
      const field = buildField(reporter, null, [], name, asRecord(def), m, c.name, prefix);
      // The soft-delete marks belong to DELETE alone: a client never sets them on create or update.
      add(m === SOFT_DELETE_MIXIN ? { ...field, writable: false, updatable: false } : field);
    }
  }
  for (const [name, def] of Object.entries(own)) {
    add(buildField(reporter, c, ["spec", "fields", name], name, asRecord(def), "entity", c.name, prefix));
  }
  // Keep id first even when an entity or mixin redefines it.
  const idField = byName.get("id") as FieldIR;
  byName.delete("id");
  const ordered: FieldIR[] = [{ ...idField, primaryKey: true, writable: false, updatable: false, immutable: true }, ...byName.values()];
  for (const ts of ["created_at", "updated_at"]) {
    if (!ordered.some((f) => f.name === ts)) ordered.push(sys(ts));
  }
  const stateMachine = typeof spec.state_machine === "string" ? spec.state_machine : null;
  const wf = stateMachine ? workflows.get(stateMachine) : undefined;
  if (stateMachine) {
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
    const field: FieldIR = {
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
    };
    if (stateField) ordered.splice(ordered.indexOf(stateField), 1);
    ordered.push(field);
  }
  if (prefix && !mixins.includes("mixin/stdlib/identifiable") && !ordered.some((f) => f.computed?.kind === "sequence")) {
    reporter.report(
      c,
      ["spec", "number_prefix"],
      "entity.number_prefix_unused",
      "number_prefix has no effect without a sequence field (compose mixin/stdlib/identifiable)",
      { severity: "warning" },
    );
  }
  const table = typeof spec.table === "string" ? spec.table : defaultTable(c.name);
  if (typeof spec.table === "string" && Object.hasOwn(SYSTEM_TABLES, spec.table)) {
    reporter.report(
      c,
      ["spec", "table"],
      "entity.system_table",
      `table ${JSON.stringify(spec.table)} is the generated app's own (${SYSTEM_TABLES[spec.table]}); choose another name`,
    );
  }
  return {
    fqn: c.fqn,
    name: c.name,
    domain: c.domain,
    file: c.loaded.file,
    description: asString(c.meta.description),
    className: pascalCase(c.name),
    label: humanize(c.name),
    labelPlural: humanize(pluralize(c.name)),
    table,
    basePath: `/${kebabCase(pluralize(c.name))}`,
    numberPrefix: prefix,
    icon: typeof spec.icon === "string" ? spec.icon : null,
    mixins,
    fields: ordered,
    primaryKey: "id",
    stateMachine,
    softDelete: mixins.includes(SOFT_DELETE_MIXIN),
    listTotal: spec.list_total === "counter" ? "counter" : "count",
    searchFields: ordered
      .filter((f) => (f.type === "string" || f.type === "text" || f.type === "email") && !f.primaryKey && f.name !== "state")
      .map((f) => f.name),
    aiIntegration: aiIntegrationOf(spec.ai_integration),
    routes: [],
    pages: [],
    api: null,
  };
}

/** `ai_integration` with every value as a sorted list of agent FQNs (a single FQN is a list of one). */
function aiIntegrationOf(raw: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const event of Object.keys(asRecord(raw)).sort(compareText)) {
    const value = asRecord(raw)[event];
    const agents = typeof value === "string" ? [value] : asStringArray(value);
    out[event] = [...new Set(agents)].sort(compareText);
  }
  return out;
}

/** `display` of every reference must name a field of the referenced entity. */
export function checkReferenceDisplays(reporter: Reporter, c: Contract, entity: EntityIR, entities: ReadonlyMap<string, EntityIR>): void {
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
