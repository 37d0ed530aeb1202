import type { FieldIR, WorkflowIR } from "../../compiler/index.js";
import { enumAliases } from "./emit-lib.js";
import { type FrontendModel, fieldLabel, type UiEntity, type UiPage, type UiRule } from "./model.js";
import { byNaturalOrder, fitList, key, LINE_WIDTH, literal, prop, str } from "./source.js";

/** The expression naming record `v` in headings and messages: its heading field, else its id. */
export function headingOf(ui: UiEntity, v: string): string {
  return ui.headingField === "id" ? `${v}.id` : `String(${prop(v, ui.headingField)} ?? ${v}.id)`;
}

/** Files of one entity's components, under src/components/{kebab}/. */
export interface EntityFile {
  path: string;
  content: string;
}

function fieldSpec(ui: UiEntity, f: FieldIR): string {
  const parts = [`name: ${str(f.name)}`, `label: ${str(fieldLabel(f))}`, `type: ${str(f.type)}`, `required: ${f.required}`];
  if (f.enum) parts.push(`enumValues: [${f.enum.map((v) => literal(v)).join(", ")}]`);
  if (ui.references.has(f.name)) parts.push(`reference: ${str(f.name)}`);
  if (f.itemsType) parts.push(`itemsType: ${str(f.itemsType)}`);
  if (f.hasDefault && f.default !== null) parts.push(`defaultValue: ${literal(f.default)}`);
  if (f.description) parts.push(`description: ${str(f.description)}`);
  const spec = fitList("  ", `${key(f.name)}: `, parts, ",", "{}");
  // A field named `then` (a PostgreSQL key word too): its spec is data, never awaited, so no thenable.
  return f.name === "then" ? `  // biome-ignore lint/suspicious/noThenProperty: a field's spec, never awaited\n${spec}` : spec;
}

function workflowSpec(w: WorkflowIR): string {
  const states = w.states.map((s) =>
    fitList(
      "    ",
      "",
      [`name: ${str(s.name)}`, `label: ${str(s.label)}`, `category: ${str(s.category)}`, `terminal: ${s.terminal}`],
      ",",
      "{}",
    ),
  );
  const transitions = w.states.map((s) => fitList("    ", `${key(s.name)}: `, (w.transitions[s.name] ?? []).map(str), ",", "[]"));
  let override = "null";
  if (w.typeOverrides && w.typeOverrides.overrides.length > 0) {
    const values = w.typeOverrides.overrides.map((o) => {
      const rows = Object.keys(o.transitions)
        .sort()
        .map((from) => `${key(from)}: [${(o.transitions[from] ?? []).map(str).join(", ")}]`);
      return fitList("      ", `${key(o.value)}: `, rows, ",", "{}");
    });
    override = `{\n    field: ${str(w.typeOverrides.field)},\n    overrides: {\n${values.join("\n")}\n    },\n  }`;
  }
  return `{\n  initial: ${str(w.initial)},\n  states: [\n${states.join("\n")}\n  ],\n  transitions: {\n${transitions.join("\n")}\n  },\n  typeOverride: ${override},\n}`;
}

function rulesSpec(rules: readonly UiRule[]): string {
  if (rules.length === 0) return "{}";
  const rows = rules.map((r) =>
    fitList("  ", `${str(r.source)}: `, [`fields: [${r.fields.map(str).join(", ")}]`, `message: ${str(r.message)}`], ",", "{}"),
  );
  return `{\n${rows.join("\n")}\n}`;
}

/** `export const {name}: readonly FieldSpec[] = [...];` of the entity's fields `names`. */
function list(ui: UiEntity, name: string, names: readonly string[]): string {
  const items = names.map((n) => prop(`${ui.camel}Fields`, n));
  return `${fitList("", `export const ${ui.camel}${name}: readonly FieldSpec[] = `, items, ";", "[]")}\n`;
}

/** {kebab}-fields.ts: the entity's field specs, field lists per view, reference sources, workflow. */
function renderFields(ui: UiEntity): string {
  const e = ui.entity;
  const imports = [`import { type FieldSpec, fieldSpecs, type RuleSpec${ui.workflow ? ", type WorkflowSpec" : ""} } from "@/lib/schema";`];
  const specs = e.fields.map((f) => fieldSpec(ui, f));
  const out = [
    `${imports.join("\n")}\n`,
    `/** Every field of ${e.fqn}, as the views show it. */`,
    // Not `satisfies Record<string, FieldSpec>`: that types a key Object.prototype has too
    // (`constructor`) as Object's own member, and its spec's literals widen to `string`.
    `export const ${ui.camel}Fields = fieldSpecs({\n${specs.join("\n")}\n});\n`,
    `/** The create form: writable fields (computed ones are filled by the server). */`,
    list(
      ui,
      "CreateFields",
      ui.createFields.map((f) => f.name),
    ),
    `/** The edit form: updatable fields, without the computed and immutable ones. */`,
    list(
      ui,
      "EditFields",
      ui.editFields.map((f) => f.name),
    ),
    `/** The detail page. */`,
    list(
      ui,
      "DetailFields",
      ui.detailFields.map((f) => f.name),
    ),
    `/** Validation rules of the create endpoint, by source text: the fields a failure is shown at. */`,
    `export const ${ui.camel}CreateRules: Record<string, RuleSpec> = ${rulesSpec(ui.createRules)};\n`,
    `/** Validation rules of the update endpoint. */`,
    `export const ${ui.camel}UpdateRules: Record<string, RuleSpec> = ${rulesSpec(ui.updateRules)};\n`,
  ];
  if (ui.workflow) {
    out.push(`/** ${ui.workflow.fqn}: the moves the board and the detail page offer. */`);
    out.push(`export const ${ui.camel}Workflow: WorkflowSpec = ${workflowSpec(ui.workflow)};\n`);
  }
  return out.join("\n");
}

/** {kebab}-references.ts (server only): where the reference fields' choices and labels come from. */
function renderReferences(ui: UiEntity): string {
  const e = ui.entity;
  const clients = [...new Set([...ui.references.values()].map((c) => c.name))].sort(byNaturalOrder);
  const refs = [...ui.references.entries()].map(([name, c]) => {
    const display = e.fields.find((f) => f.name === name)?.references?.display ?? null;
    const parts = [
      `entity: ${str(c.entity.name)}`,
      `load: () => ${c.name}.list(1000, 0)`,
      `display: ${display === null ? "null" : str(display)}`,
    ];
    return fitList("  ", `${key(name)}: `, parts, ",", "{}");
  });
  const imports = ['import type { ReferenceSource } from "@/lib/references";'];
  if (clients.length > 0) imports.push(`import { ${clients.join(", ")} } from "@/lib/server-api";`);
  return `${imports.join("\n")}

/** Reference pickers: all records of the target entity (limit 1000, offset 0), labelled by its display field. */
export const ${ui.camel}References: Record<string, ReferenceSource> = ${refs.length > 0 ? `{\n${refs.join("\n")}\n}` : "{}"};
`;
}

/** `export function Name({ a, b }: { a: A; b: B }) {`, broken as biome breaks it when too long. */
function componentSignature(name: string, props: readonly (readonly [string, string])[]): string {
  const flat = `export function ${name}({ ${props.map(([p]) => p).join(", ")} }: { ${props.map(([p, t]) => `${p}: ${t}`).join("; ")} }) {`;
  if (flat.length <= LINE_WIDTH) return flat;
  const names = props.map(([p]) => `  ${p},`).join("\n");
  const types = props.map(([p, t]) => `  ${p}: ${t};`).join("\n");
  return `export function ${name}({\n${names}\n}: {\n${types}\n}) {`;
}

/** Entity-level components take the view's field names, so two pages of one entity can differ. */
function renderTable(ui: UiEntity, route: string): string {
  const T = ui.type;
  return `import type { Sorting, ViewContext } from "@/components/list-view";
import { RecordTable } from "@/components/record-table";
import type { FieldSpec } from "@/lib/schema";
import type { ${T} } from "@/lib/types";
import { ${ui.camel}Fields } from "./${ui.kebab}-fields";

export type ${T}Column = keyof typeof ${ui.camel}Fields;

/** Table view of ${ui.entity.labelPlural.toLowerCase()} (server): enum cells as badges, references by their display field. */
${componentSignature(`${T}Table`, [
  ["rows", `readonly ${T}[]`],
  ["columns", `readonly ${T}Column[]`],
  ["sorting", "Sorting"],
  ["context", "ViewContext"],
])}
  const specs: FieldSpec[] = columns.map((c) => ${ui.camel}Fields[c]);
  return (
    <RecordTable
      rows={rows}
      columns={specs}
      labels={context.labels}
      zone={context.zone}
      href={(r) => \`${route}/\${r.id}\`}
      sorting={sorting}
      caption=${str(ui.entity.labelPlural)}
      testId="${ui.kebab}-table"
    />
  );
}
`;
}

function renderKanban(ui: UiEntity, route: string, S: string): string {
  const T = ui.type;
  const base = ui.client.basePath.replace(/\/+$/, "");
  return `"use client";

import { KanbanBoard } from "@/components/kanban-board";
import { request } from "@/lib/request";
import type { FieldSpec } from "@/lib/schema";
import type { ${T}, ${S} } from "@/lib/types";
import { ${ui.camel}Fields, ${ui.camel}Workflow } from "./${ui.kebab}-fields";

export type ${T}CardField = keyof typeof ${ui.camel}Fields;

/** Kanban view of ${ui.entity.labelPlural.toLowerCase()}: one column per state of ${ui.workflow?.fqn ?? ""}. */
${componentSignature(`${T}Kanban`, [
  ["rows", `readonly ${T}[]`],
  ["cardFields", `readonly ${T}CardField[]`],
  ["labels", "Readonly<Record<string, Readonly<Record<string, string>>>>"],
])}
  const specs: FieldSpec[] = cardFields.map((c) => ${ui.camel}Fields[c]);
  return (
    <KanbanBoard
      records={rows}
      workflow={${ui.camel}Workflow}
      entityLabel=${str(ui.entity.label)}
      cardFields={specs}
      labels={labels}
      href={(r) => \`${route}/\${r.id}\`}
      onMove={(id, state) => request<${T}>("PUT", \`${base}/\${encodeURIComponent(id)}/state\`, { state: state as ${S} })}
      testId="${ui.kebab}-kanban"
    />
  );
}
`;
}

/** {kebab}-board.tsx: the board, loaded on demand, so its drag-and-drop library is only on pages showing it. */
function renderBoard(ui: UiEntity): string {
  const T = ui.type;
  return `"use client";

import { type ComponentProps, lazy, Suspense } from "react";

// The board and its drag-and-drop library load only when the board is shown (the server renders
// its cards meanwhile, and the browser keeps them until the code arrives).
const ${T}Kanban = lazy(() => import("./${ui.kebab}-kanban").then((m) => ({ default: m.${T}Kanban })));

export function ${T}Board(props: ComponentProps<typeof ${T}Kanban>) {
  return (
    <Suspense
      fallback={
        <p role="status" data-testid="loading-state" className="text-muted-foreground py-14 text-center text-sm">
          Loading…
        </p>
      }
    >
      <${T}Kanban {...props} />
    </Suspense>
  );
}
`;
}

/** {kebab}-actions.ts: the Server Actions of the create and edit forms. */
function renderActions(ui: UiEntity): string {
  const ops = ui.client.operations;
  const base = ui.client.basePath.replace(/\/+$/, "");
  const common = [`entityLabel: ${str(ui.entity.label)}`, `headingField: ${str(ui.headingField)}`];
  const create = ops.has("create")
    ? `saveForm({
    fields: ${ui.camel}CreateFields,
    rules: ${ui.camel}CreateRules,
    method: "POST",
    path: ${str(`${base}/`)},
    values,
    ${common.join(",\n    ")},
    done: "created",
  })`
    : `Promise.resolve({ ok: false, errors: {}, summary: "This API has no create endpoint." })`;
  const update = ops.has("update")
    ? `saveForm({
    fields: ${ui.camel}EditFields,
    rules: ${ui.camel}UpdateRules,
    method: "PATCH",
    path: \`${base}/\${encodeURIComponent(id)}\`,
    values,
    ${common.join(",\n    ")},
    done: "saved",
  })`
    : `Promise.resolve({ ok: false, errors: {}, summary: "This API has no update endpoint." })`;
  return `"use server";

import { type FormResult, saveForm } from "@/lib/forms";
import "@/lib/server-api";
${fitList(
  "",
  "import ",
  ["CreateFields", "CreateRules", "EditFields", "UpdateRules"].map((n) => `${ui.camel}${n}`),
  ` from "./${ui.kebab}-fields";`,
  "{}",
)}

type Values = Record<string, string | boolean>;

/** Creates a ${ui.entity.label.toLowerCase()} from the create form's inputs. */
export async function create${ui.type}(values: Values): Promise<FormResult> {
  return ${create};
}

/** Saves the edit form's changed inputs to the ${ui.entity.label.toLowerCase()} \`id\`. */
export async function update${ui.type}(id: string, values: Values): Promise<FormResult> {
  return ${update};
}
`;
}

function renderForm(ui: UiEntity, route: string): string {
  const T = ui.type;
  return `import type { FormIsland } from "@/components/form-island";
import { RecordForm } from "@/components/record-form";
import type { ReferenceOption } from "@/lib/references";
import type { ${T} } from "@/lib/types";
import { create${T}, update${T} } from "./${ui.kebab}-actions";
import { ${ui.camel}CreateFields, ${ui.camel}EditFields } from "./${ui.kebab}-fields";

/**
 * Create form (no \`record\`: saves, says so and goes to the list) or edit form (with one),
 * rendered on the server; the Server Actions build the API's body and map its 422 to the fields.
 */
export function ${T}Form({
  record,
  options,
  zone,
  island,
  cancelHref,
}: {
  record?: ${T};
  options: Readonly<Record<string, readonly ReferenceOption[]>>;
  zone: string;
  island: typeof FormIsland;
  cancelHref?: string;
}) {
  return (
    <RecordForm<${T}>
      fields={record ? ${ui.camel}EditFields : ${ui.camel}CreateFields}
      options={options}
      record={record}
      zone={zone}
      island={island}
      action={record ? update${T}.bind(null, record.id) : create${T}}
      after=${str(route)}
      cancelHref={cancelHref}
      submitLabel={record ? "Save changes" : "Create ${ui.entity.label.toLowerCase()}"}
      testId="${ui.kebab}-form"
    />
  );
}
`;
}

function renderDetail(ui: UiEntity, route: string, listTitle: string, runs: boolean): string {
  const T = ui.type;
  const c = ui.client;
  const base = c.basePath.replace(/\/+$/, "");
  const pad = runs ? "      " : "    ";
  const element = `<${T}Form record={record} options={options} zone={zone} island={LazyFormIsland} />`;
  const flatForm = `${pad}  form={(record, options, zone) => ${element}}`;
  const formProp =
    flatForm.length <= LINE_WIDTH ? flatForm : `${pad}  form={(record, options, zone) => (\n${pad}    ${element}\n${pad}  )}`;
  const view = `${pad}<DetailView<${T}>
${pad}  id={id}
${pad}  entityLabel=${str(ui.entity.label)}
${pad}  listHref=${str(route)}
${pad}  listTitle=${str(listTitle)}
${pad}  path={\`${base}/\${encodeURIComponent(id)}\`}
${pad}  fields={${ui.camel}DetailFields}
${pad}  references={${ui.camel}References}
${pad}  headingField=${str(ui.headingField)}
${pad}  load={load}${ui.workflow ? `\n${pad}  workflow={${ui.camel}Workflow}` : ""}
${formProp}
${pad}/>`;
  const body = runs
    ? `    <div className="space-y-6">
${view}
      <AgentRuns path={\`${(c.agentRuns ?? "").replace("{id}", `\${encodeURIComponent(id)}`)}\`} />
    </div>`
    : view;
  return `${runs ? 'import { AgentRuns } from "@/components/agent-runs";\n' : ""}import { DetailView } from "@/components/detail-view";
import { LazyFormIsland } from "@/components/form-island-lazy";
import type { ${T} } from "@/lib/types";
${fitList(
  "",
  "import ",
  [`${ui.camel}DetailFields`, ...(ui.workflow ? [`${ui.camel}Workflow`] : [])],
  ` from "./${ui.kebab}-fields";`,
  "{}",
)}
import { ${T}Form } from "./${ui.kebab}-form";
import { ${ui.camel}References } from "./${ui.kebab}-references";

/** Detail page body of one ${ui.entity.label.toLowerCase()} (server): fields, workflow moves, edit and delete${runs ? ", agent runs" : ""}. */
export function ${T}Detail({ id, load }: { id: string; load: (id: string) => Promise<${T}> }) {
  return (
${body}
  );
}
`;
}

/** The component files of every entity that has a Page. */
export function renderEntityComponents(model: FrontendModel): EntityFile[] {
  const files: EntityFile[] = [];
  const aliases = enumAliases(model);
  for (const ui of model.uiEntities) {
    const S = aliases.get(`${ui.entity.name}.state`) ?? "string";
    // Links inside entity components go to the entity's first page.
    const first = model.pages.find((p: UiPage) => p.ui === ui);
    const route = first?.route ?? ui.client.basePath;
    const title = first?.page.title ?? ui.entity.labelPlural;
    const dir = `src/components/${ui.kebab}`;
    files.push({ path: `${dir}/${ui.kebab}-fields.ts`, content: renderFields(ui) });
    files.push({ path: `${dir}/${ui.kebab}-references.ts`, content: renderReferences(ui) });
    files.push({ path: `${dir}/${ui.kebab}-table.tsx`, content: renderTable(ui, route) });
    files.push({ path: `${dir}/${ui.kebab}-form.tsx`, content: renderForm(ui, route) });
    files.push({ path: `${dir}/${ui.kebab}-actions.ts`, content: renderActions(ui) });
    files.push({
      path: `${dir}/${ui.kebab}-detail.tsx`,
      content: renderDetail(ui, route, title, ui.client.agentRuns !== null),
    });
    if (ui.workflow) {
      files.push({ path: `${dir}/${ui.kebab}-kanban.tsx`, content: renderKanban(ui, route, S) });
      files.push({ path: `${dir}/${ui.kebab}-board.tsx`, content: renderBoard(ui) });
    }
  }
  return files;
}
