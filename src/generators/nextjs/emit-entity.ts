import type { FieldIR, WorkflowIR } from "../../compiler/index.js";
import { enumAliases } from "./emit-lib.js";
import { type FrontendModel, fieldLabel, type UiEntity, type UiPage, type UiRule } from "./model.js";
import { fitElementProp, fitList, key, LINE_WIDTH, literal, prop, str } from "./source.js";

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
  return fitList("  ", `${key(f.name)}: `, parts, ",", "{}");
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
  const clients = [...new Set([...ui.references.values()].map((c) => c.name))].sort();
  const imports = [
    ...(clients.length > 0
      ? ['import type { ReferenceSource } from "@/hooks/use-references";', `import { ${clients.join(", ")} } from "@/lib/api";`]
      : []),
    `import type { FieldSpec, RuleSpec${ui.workflow ? ", WorkflowSpec" : ""} } from "@/lib/schema";`,
  ];
  const specs = e.fields.map((f) => fieldSpec(ui, f));
  const refs = [...ui.references.entries()].map(([name, c]) => {
    const display = e.fields.find((f) => f.name === name)?.references?.display ?? null;
    const parts = [
      `entity: ${str(c.entity.name)}`,
      `load: () => ${c.name}.list(1000, 0)`,
      `display: ${display === null ? "null" : str(display)}`,
    ];
    return fitList("  ", `${key(name)}: `, parts, ",", "{}");
  });
  const out = [
    `${imports.join("\n")}\n`,
    `/** Every field of ${e.fqn}, as the views show it. */`,
    `export const ${ui.camel}Fields = {\n${specs.join("\n")}\n} satisfies Record<string, FieldSpec>;\n`,
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
    `/** Reference pickers: all records of the target entity (limit 1000, offset 0), labelled by its display field. */`,
    refs.length > 0
      ? `export const ${ui.camel}References: Record<string, ReferenceSource> = {\n${refs.join("\n")}\n};\n`
      : `export const ${ui.camel}References = {};\n`,
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

/** `export function Name({ a, b }: { a: A; b: B }) {`, broken as biome breaks it when too long. */
function componentSignature(name: string, props: readonly (readonly [string, string])[]): string {
  const flat = `export function ${name}({ ${props.map(([p]) => p).join(", ")} }: { ${props.map(([p, t]) => `${p}: ${t}`).join("; ")} }) {`;
  if (flat.length <= LINE_WIDTH) return flat;
  const names = props.map(([p]) => `  ${p},`).join("\n");
  const types = props.map(([p, t]) => `  ${p}: ${t};`).join("\n");
  return `export function ${name}({\n${names}\n}: {\n${types}\n}) {`;
}

/** `cond ? a : b` on one line when it fits, otherwise `? a` and `: b` on lines of their own. */
function ternary(pad: string, cond: string, a: string, b: string): string {
  const flat = `${pad}${cond} ? ${a} : ${b}`;
  return flat.length <= LINE_WIDTH ? flat : `${pad}${cond}\n${pad}  ? ${a}\n${pad}  : ${b}`;
}

/** Entity-level components take the view's field names, so two pages of one entity can differ. */
function renderTable(ui: UiEntity, route: string): string {
  const T = ui.entity.className;
  return `"use client";

import type { Sorting } from "@/components/list-view";
import { RecordTable } from "@/components/record-table";
import { type ReferenceSource, useReferences } from "@/hooks/use-references";
import type { FieldSpec } from "@/lib/schema";
import type { ${T} } from "@/lib/types";
import { ${ui.camel}Fields, ${ui.camel}References } from "./${ui.kebab}-fields";

export type ${T}Column = keyof typeof ${ui.camel}Fields;

/** Table view of ${ui.entity.labelPlural.toLowerCase()}: enum cells as badges, references by their display field. */
${componentSignature(`${T}Table`, [
  ["rows", `readonly ${T}[]`],
  ["columns", `readonly ${T}Column[]`],
  ["sorting", "Sorting"],
])}
  const specs: FieldSpec[] = columns.map((c) => ${ui.camel}Fields[c]);
  const sources: Record<string, ReferenceSource> = {};
  for (const c of columns) {
    const source = (${ui.camel}References as Record<string, ReferenceSource>)[c];
    if (source) sources[c] = source;
  }
  const refs = useReferences(sources);
  return (
    <RecordTable
      rows={rows}
      columns={specs}
      labels={refs.labels}
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
  const T = ui.entity.className;
  return `"use client";

import { KanbanBoard } from "@/components/kanban-board";
import { type ReferenceSource, useReferences } from "@/hooks/use-references";
import { ${ui.client.name} } from "@/lib/api";
import type { FieldSpec } from "@/lib/schema";
import type { ${T}, ${S} } from "@/lib/types";
import { ${ui.camel}Fields, ${ui.camel}References, ${ui.camel}Workflow } from "./${ui.kebab}-fields";

export type ${T}CardField = keyof typeof ${ui.camel}Fields;

/** Kanban view of ${ui.entity.labelPlural.toLowerCase()}: one column per state of ${ui.workflow?.fqn ?? ""}. */
${componentSignature(`${T}Kanban`, [
  ["rows", `readonly ${T}[]`],
  ["cardFields", `readonly ${T}CardField[]`],
])}
  const specs: FieldSpec[] = cardFields.map((c) => ${ui.camel}Fields[c]);
  const sources: Record<string, ReferenceSource> = {};
  for (const c of cardFields) {
    const source = (${ui.camel}References as Record<string, ReferenceSource>)[c];
    if (source) sources[c] = source;
  }
  const refs = useReferences(sources);
  return (
    <KanbanBoard
      records={rows}
      workflow={${ui.camel}Workflow}
      entityLabel=${str(ui.entity.label)}
      cardFields={specs}
      labels={refs.labels}
      href={(r) => \`${route}/\${r.id}\`}
      onMove={(id, state) => ${ui.client.name}.transition(id, state as ${S})}
      testId="${ui.kebab}-kanban"
    />
  );
}
`;
}

function renderForm(ui: UiEntity): string {
  const T = ui.entity.className;
  const ops = ui.client.operations;
  const update = ops.has("update")
    ? `${ui.client.name}.update(record.id, data as unknown as ${T}Update)`
    : `Promise.reject(new Error("this API has no update endpoint"))`;
  const create = ops.has("create")
    ? `${ui.client.name}.create(data as unknown as ${T}Create)`
    : `Promise.reject(new Error("this API has no create endpoint"))`;
  return `"use client";

import { RecordForm } from "@/components/record-form";
import { ${ui.client.name} } from "@/lib/api";
import type { ${T}${ops.has("create") ? `, ${T}Create` : ""}${ops.has("update") ? `, ${T}Update` : ""} } from "@/lib/types";
${fitList(
  "",
  "import ",
  ["CreateFields", "CreateRules", "EditFields", "References", "UpdateRules"].map((n) => `${ui.camel}${n}`),
  ` from "./${ui.kebab}-fields";`,
  "{}",
)}

/**
 * Create form (no \`record\`) or edit form (with one). The body is assembled from the inputs and
 * typed as the API's shape; the server validates it and its 422 messages appear at the fields.
 */
export function ${T}Form({
  record,
  onSaved,
  onCancel,
  cancelHref,
}: {
  record?: ${T};
  onSaved: (saved: ${T}) => void;
  onCancel?: () => void;
  cancelHref?: string;
}) {
  return (
    <RecordForm<${T}>
      fields={record ? ${ui.camel}EditFields : ${ui.camel}CreateFields}
      references={${ui.camel}References}
      rules={record ? ${ui.camel}UpdateRules : ${ui.camel}CreateRules}
      record={record}
      onSubmit={(data) =>
${ternary("        ", "record", update, create)}
      }
      onSaved={onSaved}
      onCancel={onCancel}
      cancelHref={cancelHref}
      submitLabel={record ? "Save changes" : "Create ${ui.entity.label.toLowerCase()}"}
      testId="${ui.kebab}-form"
    />
  );
}
`;
}

function renderDetail(ui: UiEntity, route: string, listTitle: string, appTitle: string, S: string): string {
  const T = ui.entity.className;
  const c = ui.client;
  const heading = headingOf(ui, "r");
  const wf = ui.workflow
    ? `\n      workflow={${ui.camel}Workflow}\n      transition={(id, state) => ${c.name}.transition(id, state as ${S})}`
    : "";
  return `"use client";

import { lazy } from "react";

import { DetailView } from "@/components/detail-view";
import { ${c.name} } from "@/lib/api";
import type { ${T}${ui.workflow ? `, ${S}` : ""} } from "@/lib/types";
${fitList(
  "",
  "import ",
  [`${ui.camel}DetailFields`, `${ui.camel}References`, ...(ui.workflow ? [`${ui.camel}Workflow`] : [])],
  ` from "./${ui.kebab}-fields";`,
  "{}",
)}

// The edit form loads when Edit is clicked, which keeps it out of the page's First Load JS.
const ${T}Form = lazy(() => import("./${ui.kebab}-form").then((m) => ({ default: m.${T}Form })));

/** Detail page body of one ${ui.entity.label.toLowerCase()}: fields, workflow moves, edit and delete. */
export function ${T}Detail({ id }: { id: string }) {
  return (
    <DetailView<${T}>
      id={id}
      appTitle=${str(appTitle)}
      entityLabel=${str(ui.entity.label)}
      listHref=${str(route)}
      listTitle=${str(listTitle)}
      fields={${ui.camel}DetailFields}
      references={${ui.camel}References}
      heading={(r) => ${heading}}
      load={(recordId) => ${c.name}.get(recordId)}
      remove={(recordId) => ${c.name}.delete(recordId)}${wf}
${fitElementProp("      ", "renderForm", "(record, done)", `${T}Form`, [
  "record={record}",
  "onSaved={(saved) => done(saved)}",
  "onCancel={() => done(null)}",
])}
    />
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
    const route = first?.route ?? ui.entity.basePath;
    const title = first?.page.title ?? ui.entity.labelPlural;
    const dir = `src/components/${ui.kebab}`;
    files.push({ path: `${dir}/${ui.kebab}-fields.ts`, content: renderFields(ui) });
    files.push({ path: `${dir}/${ui.kebab}-table.tsx`, content: renderTable(ui, route) });
    files.push({ path: `${dir}/${ui.kebab}-form.tsx`, content: renderForm(ui) });
    files.push({ path: `${dir}/${ui.kebab}-detail.tsx`, content: renderDetail(ui, route, title, model.title, S) });
    if (ui.workflow) files.push({ path: `${dir}/${ui.kebab}-kanban.tsx`, content: renderKanban(ui, route, S) });
  }
  return files;
}
