import type { EntityIR, FieldIR, ServedOperationIR } from "../../compiler/index.js";
import { FIELD_TYPE_NAMES, FIELD_TYPES, pascalCase } from "../../compiler/index.js";
import { type EnvelopeField, LIST_ENVELOPE } from "../list-envelope.js";
import { type ApiClient, type FrontendModel, isReservedTypeName } from "./model.js";
import { byNaturalOrder, fitBreak, fitList, key, LINE_WIDTH, literal, str } from "./source.js";

/** Names of the enum aliases in types.ts, e.g. ticket.priority -> TicketPriority. */
export function enumAliases(model: FrontendModel): Map<string, string> {
  const typeOf = (e: EntityIR): string => model.typeNames.get(e.fqn) ?? e.className;
  const taken = new Set(model.entities.flatMap((e) => [typeOf(e), `${typeOf(e)}Create`, `${typeOf(e)}Update`]));
  const out = new Map<string, string>();
  for (const e of model.entities) {
    for (const f of e.fields) {
      if (!f.enum) continue;
      let name = `${typeOf(e)}${pascalCase(f.name)}`;
      if (taken.has(name) || isReservedTypeName(name)) name = `${name}Value`;
      taken.add(name);
      out.set(`${e.name}.${f.name}`, name);
    }
  }
  return out;
}

export function fieldType(e: EntityIR, f: FieldIR, aliases: Map<string, string>): string {
  const alias = aliases.get(`${e.name}.${f.name}`);
  if (alias) return alias;
  if (f.type === "array") return f.itemsType && f.itemsType !== "array" ? `${FIELD_TYPES[f.itemsType].ts}[]` : "unknown[]";
  return FIELD_TYPES[f.type].ts;
}

function doc(text: string, pad = ""): string {
  const clean = text.replace(/\*\//g, "* /").trim();
  return clean ? `${pad}/** ${clean} */\n` : "";
}

/** The body of every list endpoint, from the description the backend's response model uses too. */
function renderListResult(): string {
  const tsType = (f: EnvelopeField): string => {
    const base = f.kind === "records" ? "T[]" : f.kind === "integer" ? "number" : "string";
    return f.nullable ? `${base} | null` : base;
  };
  const lines = LIST_ENVELOPE.map((f) => `${doc(f.description, "  ")}  ${key(f.name)}: ${tsType(f)};`);
  return `/** One page of a list endpoint, as the API returns it. */\nexport interface ListResult<T> {\n${lines.join("\n")}\n}\n`;
}

/**
 * field-types.ts: the contract's field types and the input a form edits each with, written from
 * the compiler's field table so the frontend never keeps its own list.
 */
export function renderFieldTypes(): string {
  const names = FIELD_TYPE_NAMES.map((t) => literal(t));
  const union = `export type FieldType = ${names.join(" | ")};`;
  const widgets = FIELD_TYPE_NAMES.map((t) => {
    const w = FIELD_TYPES[t].widget;
    const parts = [`element: ${literal(w.element)}`, `inputType: ${literal(w.inputType)}`];
    if (w.pattern !== undefined) parts.push(`pattern: ${literal(w.pattern)}`);
    if (w.placeholder !== undefined) parts.push(`placeholder: ${literal(w.placeholder)}`);
    return fitList("  ", `${key(t)}: `, parts, ",", "{}");
  });
  return `/** The field types of the contracts (schemas/common.schema.json). */
${union.length <= LINE_WIDTH ? union : `export type FieldType =\n${names.map((n) => `  | ${n}`).join("\n")};`}

/** How a form edits a value: the element, its input type, and what the browser checks before the API. */
export interface FieldWidget {
  element: "input" | "textarea" | "checkbox";
  inputType: string;
  pattern?: string;
  placeholder?: string;
}

export const FIELD_WIDGETS: Readonly<Record<FieldType, FieldWidget>> = {
${widgets.join("\n")}
};
`;
}

/** types.ts: the record, create and update shapes of every entity, as the API speaks them. */
export function renderTypes(model: FrontendModel): string {
  const aliases = enumAliases(model);
  const parts: string[] = [
    "/** Record types of every entity, in the shapes the generated API reads and returns. */\n",
    renderListResult(),
    "/** Links the API attaches to every record; `self` is always there. */\nexport type Links = { self: string } & Record<string, string>;\n",
  ];
  for (const e of model.entities) {
    const T = model.typeNames.get(e.fqn) ?? e.className;
    const lines: string[] = [];
    for (const f of e.fields) {
      const alias = aliases.get(`${e.name}.${f.name}`);
      if (alias && f.enum) lines.push(`export type ${alias} = ${f.enum.map((v) => literal(v)).join(" | ")};`);
    }
    if (lines.length > 0) parts.push(`${lines.join("\n")}\n`);

    const record: string[] = [];
    for (const f of e.fields) {
      const t = fieldType(e, f, aliases);
      // As the backend's record model: every field is in every record, null where the compiler allows it.
      record.push(`${doc(f.description, "  ")}  ${key(f.name)}: ${t}${f.alwaysPresent ? "" : " | null"};`);
    }
    record.push("  _links?: Links;");
    parts.push(`${doc(e.description || e.label)}export interface ${T} {\n${record.join("\n")}\n}\n`);

    const create = e.fields
      .filter((f) => f.writable)
      .map((f) => `  ${key(f.name)}${f.required ? "" : "?"}: ${fieldType(e, f, aliases)}${f.required ? "" : " | null"};`);
    parts.push(
      create.length > 0
        ? `/** Body of POST ${e.basePath}. */\nexport interface ${T}Create {\n${create.join("\n")}\n}\n`
        : `/** Body of POST ${e.basePath}: the entity has no field a client writes. */\nexport type ${T}Create = Record<string, never>;\n`,
    );

    const update = e.fields.filter((f) => f.updatable).map((f) => `  ${key(f.name)}?: ${fieldType(e, f, aliases)} | null;`);
    parts.push(
      update.length > 0
        ? `/** Body of PATCH ${e.basePath}/{id}: every field optional. */\nexport interface ${T}Update {\n${update.join("\n")}\n}\n`
        : `/** Body of PATCH ${e.basePath}/{id}: the entity has no updatable field. */\nexport type ${T}Update = Record<string, never>;\n`,
    );
  }
  return parts.join("\n");
}

/** A served path with `{id}` as a template literal over the `id` argument. */
function pathTemplate(path: string): string {
  return `\`${path.replace("{id}", `\${encodeURIComponent(id)}`)}\``;
}

/** A served path as the client calls it: collections with a trailing slash, as the backend documents them. */
function callPath(op: ServedOperationIR, basePath: string): string {
  return op.path === basePath ? `${op.path}/` : op.path;
}

/**
 * One method per operation the compiler decided the API serves (`entity.api.operations`), at its
 * method and path: the client never rebuilds a path, so it cannot call one the backend lacks.
 */
function clientMethod(op: ServedOperationIR, c: ApiClient, T: string, aliases: Map<string, string>): string[] {
  const path = callPath(op, c.basePath);
  const url = path.includes("{id}") ? pathTemplate(path) : str(path);
  const call = (signature: string, result: string, body = ""): string =>
    fitBreak("  ", `${op.operation}: (${signature}) =>`, `request<${result}>(${str(op.method)}, ${url}${body}),`);
  switch (op.operation) {
    case "list":
      return [
        `  /** ${op.method} ${path} — one page of records and the total. */`,
        fitBreak(
          "  ",
          "list: (limit = 100, offset = 0, filters: ListFilters = {}) =>",
          `request<ListResult<${T}>>(${str(op.method)}, ${url}, undefined, { ...filters, limit, offset }),`,
        ),
      ];
    case "get":
      return [`  /** ${op.method} ${path} */`, call("id: string", T)];
    case "create":
      return [`  /** ${op.method} ${path} */`, call(`data: ${T}Create`, T, ", data")];
    case "update":
      return [`  /** ${op.method} ${path} */`, call(`id: string, data: ${T}Update`, T, ", data")];
    case "delete":
      return [`  /** ${op.method} ${path} */`, call("id: string", "void")];
    case "transition": {
      const stateType = aliases.get(`${c.entity.name}.state`) ?? "string";
      return [
        `  /** ${op.method} ${path} — move the record to another workflow state. */`,
        call(`id: string, state: ${stateType}`, T, ", { state }"),
      ];
    }
  }
}

function clientBlock(c: ApiClient, T: string, aliases: Map<string, string>): string {
  const lines = c.served.flatMap((op) => clientMethod(op, c, T, aliases));
  if (c.agentRuns !== null) {
    lines.push(
      `  /** GET ${c.agentRuns} — what the agents decided about the record. */`,
      fitBreak("  ", "agentRuns: (id: string) =>", `request<AgentRunList>("GET", ${pathTemplate(c.agentRuns)}),`),
    );
  }
  return `/** Client of Route ${c.route.fqn}. */\nexport const ${c.name} = {\n${lines.join("\n")}\n};\n`;
}

/** The body of `GET {base_path}/{id}/agent-runs` (app/agents.py AgentRun in the backend). */
const AGENT_RUN_TYPES = `
/** One run of an agent for a record: what it was asked, what it answered, what was done. */
export interface AgentRun {
  id: string;
  agent: string;
  event: string;
  event_id: string;
  /** running, applied, fallback or skipped. */
  decision: string;
  confidence: number | null;
  changes: Record<string, unknown>;
  /** Fields of the reply outside the agent's output.updates. */
  ignored: string[];
  reason: string | null;
  error: string | null;
  reply: string | null;
  prompt_hash: string | null;
  duration_ms: number | null;
  started_at: string;
  finished_at: string | null;
}

export interface AgentRunList {
  items: AgentRun[];
}
`;

/** api.ts: the fixed request core (templates/src/lib/request.ts) plus one client per Route. */
export function renderApi(model: FrontendModel): string {
  const aliases = enumAliases(model);
  const names = new Set<string>();
  const typeOf = (c: ApiClient): string => model.typeNames.get(c.entity.fqn) ?? c.entity.className;
  for (const c of model.clients) {
    names.add(typeOf(c));
    if (c.operations.has("create")) names.add(`${typeOf(c)}Create`);
    if (c.operations.has("update")) names.add(`${typeOf(c)}Update`);
    if (c.operations.has("transition")) {
      const s = aliases.get(`${c.entity.name}.state`);
      if (s) names.add(s);
    }
  }
  names.add("ListResult");
  const imports = `${fitList("", "import type ", [...names].sort(byNaturalOrder), ' from "./types";', "{}")}\n`;
  const runs = model.clients.some((c) => c.agentRuns !== null);
  const clients = model.clients.map((c) => clientBlock(c, typeOf(c), aliases)).join("\n");
  const core = `
/*
 * One client per Route contract. Server components import them from ./server-api (which calls the
 * backend with the session's token); in the browser the same calls go through /api/backend.
 */
export * from "./request";
`;
  const bases = [...new Set(model.clients.map((c) => c.basePath.replace(/\/+$/, "")))].sort();
  const paths = `
/** The API's resource paths, the only ones the browser may reach through /api/backend. */
${fitList(
  "",
  "export const RESOURCE_PATHS: readonly string[] = ",
  bases.map((b) => JSON.stringify(b)),
  ";",
  "[]",
)}
`;
  return `import { type ListFilters, request } from "./request";\n${imports}${core}${paths}${runs ? AGENT_RUN_TYPES : ""}\n${clients}`;
}
