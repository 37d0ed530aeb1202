import type { EntityIR, FieldIR, FieldType } from "../../compiler/index.js";
import { pascalCase } from "../../compiler/index.js";
import { type EnvelopeField, LIST_ENVELOPE } from "../list-envelope.js";
import { type ApiClient, type FrontendModel, isReservedTypeName } from "./model.js";
import { byNaturalOrder, fitBreak, fitList, key, literal, str } from "./source.js";

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

function scalarType(t: FieldType): string {
  switch (t) {
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "array":
      return "unknown[]";
    case "object":
      return "Record<string, unknown>";
    default:
      return "string";
  }
}

export function fieldType(e: EntityIR, f: FieldIR, aliases: Map<string, string>): string {
  const alias = aliases.get(`${e.name}.${f.name}`);
  if (alias) return alias;
  if (f.type === "array") return f.itemsType && f.itemsType !== "array" ? `${scalarType(f.itemsType)}[]` : "unknown[]";
  return scalarType(f.type);
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
      // id, required fields and the workflow state are always present; everything else may be null.
      const always = f.primaryKey || f.required || (f.name === "state" && e.stateMachine !== null);
      record.push(`${doc(f.description, "  ")}  ${key(f.name)}${always ? "" : "?"}: ${t}${always ? "" : " | null"};`);
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

function clientBlock(c: ApiClient, T: string, aliases: Map<string, string>): string {
  const base = c.basePath.replace(/\/+$/, "");
  const item = `\`${base}/\${encodeURIComponent(id)}\``;
  const lines: string[] = [];
  const ops = c.operations;
  // Collection paths are called with a trailing slash, as the backend documents them.
  if (ops.has("list")) {
    lines.push(
      `  /** GET ${base}/ — one page of records and the total. */`,
      fitBreak(
        "  ",
        "list: (limit = 100, offset = 0, filters: ListFilters = {}) =>",
        `request<ListResult<${T}>>("GET", ${str(`${base}/`)}, undefined, { ...filters, limit, offset }),`,
      ),
    );
  }
  if (ops.has("get")) lines.push(`  /** GET ${base}/{id} */`, fitBreak("  ", "get: (id: string) =>", `request<${T}>("GET", ${item}),`));
  if (ops.has("create"))
    lines.push(
      `  /** POST ${base}/ */`,
      fitBreak("  ", `create: (data: ${T}Create) =>`, `request<${T}>("POST", ${str(`${base}/`)}, data),`),
    );
  if (ops.has("update"))
    lines.push(
      `  /** PATCH ${base}/{id} */`,
      fitBreak("  ", `update: (id: string, data: ${T}Update) =>`, `request<${T}>("PATCH", ${item}, data),`),
    );
  if (ops.has("delete"))
    lines.push(`  /** DELETE ${base}/{id} */`, fitBreak("  ", "delete: (id: string) =>", `request<void>("DELETE", ${item}),`));
  if (ops.has("transition")) {
    const stateType = aliases.get(`${c.entity.name}.state`) ?? "string";
    lines.push(
      `  /** PUT ${base}/{id}/state — move the record to another workflow state. */`,
      fitBreak(
        "  ",
        `transition: (id: string, state: ${stateType}) =>`,
        `request<${T}>("PUT", \`${base}/\${encodeURIComponent(id)}/state\`, { state }),`,
      ),
    );
  }
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
