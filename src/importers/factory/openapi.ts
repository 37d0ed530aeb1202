import SwaggerParser from "@apidevtools/swagger-parser";
import { type Document, isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { asRecord as rec } from "../../contracts/unchecked.js";
import { compareText } from "../../shared/text.js";
import type { FactKind, ForeignKey, ImportField, ImportModel, ImportNote, ImportOperation, ImportTable, SourceLocation } from "../model.js";
import { ImportError } from "../model.js";
import { singularize, snakeCase } from "../naming.js";
import { mapOpenApiType } from "../type-map.js";
import { bundleOpenApi } from "./openapi-bundle.js";
import { readSource } from "./read.js";

type Schema = Record<string, unknown>;

const METHODS = ["get", "post", "put", "patch", "delete"];
/** Schemas that describe an error payload, not a resource. */
const ERROR_WORDS = /(^|_)(error|problem|progress|failure)(s|_details?|_response|_info|_message|_body)?$/;
const isErrorName = (name: string): boolean => ERROR_WORDS.test(snakeCase(name));
/** Names of a resource's request and response variants: `ProjectReq`, `PatchedProject`, `UserCreate`, `UserPublic`. */
const VARIANT_SUFFIX =
  /(Create|Update|Patch|Partial|Put|Post|Upsert)?(Req|Request|Input|Body|Payload|Params|Options|Create|Update|Patch|Response|Resp|Out|Output|Read|Detail|Details|Summary|Full|Public|Private|Base|Dto|DTO|Fields)?(Success|Ok|OK)?$/;
const VARIANT_PREFIX = /^(Patched|Create|Update|New|Edit|Writable|Readonly|ReadOnly|Get|Retrieve|Fetch)(?=[A-Z])/;
/** Properties of a list envelope that hold its records. */
const ENVELOPE_KEYS = ["data", "results", "items", "content", "records", "rows", "list", "entries"];
/** What a request variant is for: its fields are writable, its `required` is required-on-create. */
const REQUEST_VARIANT =
  /(Req|Request|Input|Body|Payload|Params|Options|Create|Update|Patch|Put|Post|Upsert)$|^(Patched|Create|Update|New|Edit|Writable)/;

/**
 * Reads an OpenAPI 3.0/3.1 or Swagger 2.0 document (YAML or JSON) into the neutral model.
 * External `$ref`s are bundled into one document first (openapi-bundle.ts), then swagger-parser
 * validates it against the official schemas; internal refs are kept and followed here, so schema names survive (they name the
 * entities) and a ref that only leads back to itself is reported with its place.
 */
export async function readOpenApi(file: string): Promise<ImportModel> {
  const text = readSource(file);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const syntax = doc.errors[0];
  if (syntax) {
    const pos = lineCounter.linePos(syntax.pos[0]);
    throw new ImportError(`malformed spec: ${syntax.message.split("\n")[0]}`, { file, line: pos.line, column: pos.col });
  }
  const locate = (pointer: string): SourceLocation => pointerLocation(file, doc, lineCounter, pointer);
  const root = rec(doc.toJS());
  if (typeof root.openapi !== "string" && root.swagger !== "2.0") {
    throw new ImportError("not an OpenAPI document: neither 'openapi: 3.x' nor 'swagger: \"2.0\"' at the top", {
      file,
      line: 1,
      column: 1,
    });
  }
  const api = bundleOpenApi(file, root, locate);
  try {
    // The bundled document has only local refs; the validator dereferences its own copy.
    await SwaggerParser.validate(structuredClone(api) as never, { dereference: { circular: "ignore" } });
  } catch (e) {
    throw specError(e, file, locate);
  }
  return new OpenApiReader(file, api, locate).read();
}

/** swagger-parser's messages name the JSON pointer of the problem; the first line, with its place. */
function specError(e: unknown, file: string, locate: (p: string) => SourceLocation): ImportError {
  const message = e instanceof Error ? e.message : String(e);
  const lines = message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const pointerLine = lines.find((l) => l.startsWith("#/"));
  if (pointerLine) {
    const pointer = pointerLine.split(/\s/)[0]?.slice(1) ?? "";
    return new ImportError(`invalid spec: ${pointerLine.slice(pointer.length + 1).trim() || lines[0]}`, locate(pointer));
  }
  if (/\$ref pointer/.test(message)) return new ImportError(`unresolvable $ref: ${lines[0]}`, { file });
  return new ImportError(`invalid spec: ${lines[0] ?? message}`, { file });
}

function pointerLocation(file: string, doc: Document, lc: LineCounter, pointer: string): SourceLocation {
  const path = pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  // Step by step: a number is an index in a list, and in a map the key as written, which YAML
  // reads as a string ('200') or a number (200).
  let node: unknown = doc.contents;
  let found = node as { range?: [number, number, number] } | null;
  for (const seg of path) {
    const next = isSeq(node)
      ? node.get(Number(seg), true)
      : isMap(node)
        ? (node.get(seg, true) ?? (/^\d+$/.test(seg) ? node.get(Number(seg), true) : undefined))
        : undefined;
    if (next === undefined || next === null) break;
    node = next;
    found = next as { range?: [number, number, number] };
  }
  if (found?.range) {
    const pos = lc.linePos(found.range[0]);
    return { file, line: pos.line, column: pos.col, pointer };
  }
  return { file, pointer };
}

class OpenApiReader {
  private readonly notes: ImportNote[] = [];
  private readonly schemas: Record<string, unknown>;
  private readonly base: string;

  constructor(
    private readonly file: string,
    private readonly api: Schema,
    private readonly locate: (p: string) => SourceLocation,
  ) {
    const swagger2 = api.swagger === "2.0";
    this.schemas = rec(swagger2 ? api.definitions : rec(api.components).schemas);
    this.base = swagger2 ? "/definitions/" : "/components/schemas/";
  }

  /** An `allOf` part -> the schema it is merged into: a reference to the part is one to the whole. */
  private partOf: ReadonlyMap<string, string> = new Map();

  /** A schema name -> the resource (entity) it describes, for variants and list envelopes. */
  private readonly resourceOf = new Map<string, string>();

  /** Schema names by how operations use them: answered by a GET of one item, only in error answers. */
  private readonly itemAnswers = new Set<string>();
  private readonly errorOnly = new Set<string>();

  /**
   * How the operations use each named schema, which decides what it is: one a GET of a single item
   * (`/things/{id}`) answers with is a resource even when it holds a list (`{id, records: [...]}`);
   * one that only non-2xx answers carry is an error payload, whatever its name.
   */
  private usage(): void {
    const good = new Set<string>();
    const bad = new Set<string>();
    const prefix = `#${this.base}`;
    const refs = (v: unknown, into: Set<string>): void => {
      const text = JSON.stringify(v ?? null);
      for (const m of text.matchAll(/"\$ref":"([^"]+)"/g)) {
        const r = m[1] as string;
        if (r.startsWith(prefix)) into.add(r.slice(prefix.length).replace(/~1/g, "/").replace(/~0/g, "~"));
      }
    };
    for (const [path, item] of Object.entries(rec(this.api.paths))) {
      for (const method of METHODS) {
        const op = rec(rec(item)[method]);
        for (const [code, res] of Object.entries(rec(op.responses))) {
          const r = this.resolveResponse(res);
          if (/^2/.test(code)) {
            refs(r, good);
            if (method === "get" && /\/\{[^}/]+\}\/?$/.test(path)) {
              for (const raw of [r.schema, ...Object.values(rec(r.content)).map((m) => rec(m).schema)]) {
                const ref = rec(raw).$ref;
                if (typeof ref === "string" && ref.startsWith(prefix))
                  this.itemAnswers.add(ref.slice(prefix.length).replace(/~1/g, "/").replace(/~0/g, "~"));
              }
            }
          } else refs(r, bad);
        }
        refs(op.requestBody, good);
        refs(op.parameters, good);
      }
    }
    // A schema another schema refers to is part of the data, not only an error.
    for (const [name, raw] of Object.entries(this.schemas)) if (!bad.has(name)) refs(raw, good);
    for (const n of bad) if (!good.has(n)) this.errorOnly.add(n);
  }

  private isError(name: string): boolean {
    return isErrorName(name) || this.errorOnly.has(name);
  }

  read(): ImportModel {
    this.usage();
    const tables: ImportTable[] = [];
    const parts = this.allOfParts();
    this.partOf = parts;
    const groups = this.resources(parts);
    for (const name of Object.keys(this.schemas)) {
      const pointer = `${this.base}${escapePointer(name)}`;
      const resource = this.resourceOf.get(name);
      if (resource !== undefined && resource !== name) continue;
      const variants = groups.get(name);
      if (variants && variants.length > 1) {
        tables.push(this.folded(name, variants));
        continue;
      }
      const whole = parts.get(name);
      if (whole) {
        this.notes.push({
          kind: "changed",
          subject: name,
          reason: `only a part of ${whole} (allOf); merged into it`,
          fact: "table",
          location: this.locate(pointer),
        });
        continue;
      }
      const schema = this.resolve({ $ref: `#${pointer}` }, []);
      if (!isObjectSchema(schema)) continue;
      if (this.isError(name)) {
        this.notes.push({
          kind: "skipped",
          subject: name,
          reason: this.errorOnly.has(name)
            ? "only error answers (4xx, 5xx, default) carry it: an error payload, not a resource"
            : "an error or progress payload, not a resource",
          location: this.locate(pointer),
          fact: "table",
        });
        continue;
      }
      tables.push(this.table(name, schema, pointer));
    }
    // Resources known only by their variants (no schema has the resource's own name).
    for (const [name, variants] of groups) if (!(name in this.schemas)) tables.push(this.folded(name, variants));
    const names = new Set(tables.map((t) => t.name));
    this.idReferences(tables);
    const operations = this.operations(names);
    for (const [name, t] of this.inline) {
      tables.push(t);
      this.notes.push({
        kind: "changed",
        subject: name,
        reason: "no named schema: the entity is inferred from the inline schemas of its operations",
        fact: "table",
        location: t.location,
      });
    }
    // A variant read for several folds notes the same thing once.
    const seen = new Set<string>();
    const notes = this.notes.filter((n) => {
      const k = `${n.kind}\u0000${n.subject}\u0000${n.reason}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    return { format: "openapi", files: [this.file], tables, operations, notes };
  }

  /**
   * One entity per resource: the request, response and list-envelope schemas of a resource
   * (`ProjectReq`/`Project`, `PaginatedProjectList`, `UserCreate`/`UserPublic`) are grouped under
   * the resource's name; each variant and envelope is noted. Returns resource -> its schema names.
   */
  private resources(parts: ReadonlyMap<string, string>): Map<string, string[]> {
    const names = Object.keys(this.schemas).filter((n) => !parts.has(n) && !this.isError(n));
    const objects = new Set(names.filter((n) => isObjectSchema(this.resolve({ $ref: `#${this.base}${escapePointer(n)}` }, []))));
    const groups = new Map<string, string[]>();
    // List envelopes first: an object whose records property is an array of a named schema.
    for (const n of objects) {
      const schema = this.resolve({ $ref: `#${this.base}${escapePointer(n)}` }, []);
      // A schema with its own id, or what a GET of one item answers, is a resource holding a list.
      if (this.itemAnswers.has(n) || "id" in rec(schema.properties)) continue;
      const item = this.envelopeOf(schema);
      if (item !== undefined && item !== n) {
        this.resourceOf.set(n, item);
        this.notes.push({
          kind: "changed",
          subject: n,
          reason:
            Object.keys(rec(schema.properties)).length === 1
              ? `a wrapper of ${item}; unwrapped, not an entity`
              : `a list envelope of ${item} (pagination); unwrapped, not an entity`,
          fact: "table",
          location: this.locate(`${this.base}${escapePointer(n)}`),
        });
      }
    }
    const stem = (n: string): string => n.replace(VARIANT_PREFIX, "").replace(VARIANT_SUFFIX, "");
    const byStem = new Map<string, string[]>();
    for (const n of objects) {
      if (this.resourceOf.has(n)) continue;
      const s = stem(n) || n;
      byStem.set(s, [...(byStem.get(s) ?? []), n]);
    }
    for (const [s, members] of byStem) {
      // A stem names a resource when a schema has that very name, or when several variants share it.
      if (members.length < 2 && !members.includes(s)) continue;
      // The resource's own name: `GetBroadcastResponseSuccess` and `CreateBroadcastOptions` are a Broadcast.
      const canonical = s;
      groups.set(
        canonical,
        members.sort((a, b) => (a === canonical ? -1 : b === canonical ? 1 : compareText(a, b))),
      );
      for (const m of members) this.resourceOf.set(m, canonical);
    }
    // Envelopes point at the resource of their item.
    for (const [n, item] of [...this.resourceOf]) {
      const r = this.resourceOf.get(item);
      if (r !== undefined && r !== item && n !== item) this.resourceOf.set(n, r);
    }
    return groups;
  }

  /**
   * The schema name of the records a list envelope holds (`{results: [Project], count}`), or of the
   * one record a wrapper holds (`{api_key_info: ApiKeyInfo}`, its only property), if it is one.
   */
  private envelopeOf(s: Schema): string | undefined {
    const props = rec(s.properties);
    const only = Object.values(props);
    if (only.length === 1) {
      const ref = rec(only[0]).$ref;
      if (typeof ref === "string" && ref.startsWith(`#${this.base}`) && isObjectSchema(this.resolve(only[0], [])))
        return ref
          .slice(this.base.length + 1)
          .replace(/~1/g, "/")
          .replace(/~0/g, "~");
    }
    for (const key of ENVELOPE_KEYS) {
      const p = rec(props[key]);
      const items = p.type === "array" || p.items ? p.items : undefined;
      const ref = rec(items).$ref;
      if (typeof ref === "string" && ref.startsWith(`#${this.base}`))
        return ref
          .slice(this.base.length + 1)
          .replace(/~1/g, "/")
          .replace(/~0/g, "~");
    }
    return undefined;
  }

  /**
   * The entity of a resource from its variants: every field of any of them; a field only responses
   * carry is read-only (never required), one only requests carry is write-only (noted); `required`
   * is the create request's when there is one, else the resource schema's.
   */
  private folded(name: string, variants: readonly string[]): ImportTable {
    const tableOf = (n: string): ImportTable => {
      const pointer = `${this.base}${escapePointer(n)}`;
      return this.table(name, this.resolve({ $ref: `#${pointer}` }, []), pointer);
    };
    const requests = variants.filter((v) => REQUEST_VARIANT.test(v) && v !== name);
    const responses = variants.filter((v) => !requests.includes(v));
    const create = requests.find(
      (v) => /Create|Req|Request|Input|Post|New|Body|Payload/.test(v) && !/^Patched|Update|Patch|Partial/.test(v),
    );
    const main = tableOf(responses[0] ?? (variants[0] as string));
    const requestFields = new Map<string, ImportField>();
    for (const r of requests) for (const f of tableOf(r).fields) if (!requestFields.has(f.name)) requestFields.set(f.name, f);
    const createRequired = create
      ? new Set(
          tableOf(create)
            .fields.filter((f) => f.required)
            .map((f) => f.name),
        )
      : undefined;
    const fields: ImportField[] = [];
    const seen = new Set<string>();
    // The schema named as the resource, when there is one: what its `required` says is compared.
    const own = variants.includes(name) ? tableOf(name) : undefined;
    for (const v of [...responses, ...requests]) {
      const t = v === (responses[0] ?? variants[0]) ? main : tableOf(v);
      for (const f of t.fields) {
        if (seen.has(f.name)) continue;
        seen.add(f.name);
        const out = { ...f };
        if (requests.length > 0 && !requestFields.has(f.name) && f.name !== "id") out.required = false;
        else if (createRequired) out.required = createRequired.has(f.name);
        const was = own?.fields.find((x) => x.name === f.name);
        if (was && (was.required === true) !== (out.required === true) && f.name !== "id")
          this.notes.push({
            kind: "changed",
            subject: `${name}.${f.name}`,
            reason: out.required
              ? `required: ${create ?? "the create request"} requires it, though ${name} does not`
              : `optional: ${create ? `${create} does not require it` : "only responses carry it (read-only)"}, though ${name} does`,
            location: f.location ?? main.location,
            fact: "nullability",
          });
        if (requests.length > 0 && !responses.some((r) => r === v) && responses.length > 0)
          this.notes.push({
            kind: "changed",
            subject: `${name}.${f.name}`,
            reason: `write-only (only in ${v}); kept as a field`,
            fact: "column",
            location: f.location ?? main.location,
          });
        fields.push(out);
      }
      for (const fk of t.foreignKeys) if (!main.foreignKeys.some((x) => x.columns[0] === fk.columns[0])) main.foreignKeys.push(fk);
    }
    for (const v of variants)
      if (v !== name)
        this.notes.push({
          kind: "changed",
          subject: v,
          reason: `a request or response variant of ${name}; folded into its entity`,
          location: this.locate(`${this.base}${escapePointer(v)}`),
          fact: "table",
        });
    this.notes.push({
      kind: "changed",
      subject: name,
      reason: `one entity for the schemas of one resource: ${variants.join(", ")}${requests.length > 0 ? " (fields only in responses are read-only, not required)" : ""}`,
      fact: "table",
      location: main.location,
    });
    return { ...main, fields, primaryKey: fields.some((f) => f.name === "id") ? ["id"] : [] };
  }

  /** `ownerId` / `owner_id` of uuid type, where `owner` (or `owners`) is an entity: a reference to it. */
  private idReferences(tables: ImportTable[]): void {
    const byName = new Map(tables.map((t) => [snakeCase(t.name), t.name]));
    for (const t of tables) {
      for (const f of t.fields) {
        const m = /^(.+?)_?(id|Id|ID)$/.exec(f.name);
        if (!m || f.type !== "uuid" || t.foreignKeys.some((fk) => fk.columns.includes(f.name))) continue;
        const stem = snakeCase(m[1] as string);
        const target = byName.get(stem) ?? byName.get(stem.replace(/s$/, ""));
        if (target) t.foreignKeys.push({ columns: [f.name], table: target, targetColumns: [] });
      }
    }
  }

  /** Entities inferred from inline schemas, by the name of the path's last static segment. */
  private readonly inline = new Map<string, ImportTable>();

  /**
   * An operation without a named schema: its 2xx JSON body (unwrapped from a `data` envelope and
   * from an array) or its request body, when that is an object with properties, describes a
   * record of the resource its path names. Properties of several operations are merged.
   */
  private inlineTable(path: string, method: string, op: Schema, pointer: string, named: ReadonlySet<string>): string | undefined {
    const segment = path
      .split("/")
      .filter((s) => s && !s.startsWith("{"))
      .pop();
    const bodies: { schema: Schema; at: string }[] = [];
    for (const [code, res] of Object.entries(rec(op.responses))) {
      if (!/^2/.test(code)) continue;
      const media = rec(rec(this.resolveResponse(res).content)["application/json"]);
      const at = `${pointer}/responses/${code}`;
      if (media.schema) bodies.push({ schema: this.unwrap(media.schema), at });
      else {
        // Only examples: the record's shape is read from the first one, and the note says so.
        const example = exampleOf(media);
        if (example !== undefined) {
          bodies.push({ schema: this.unwrap(schemaOfExample(example)), at });
          this.notes.push({
            kind: "changed",
            subject: `${method.toUpperCase()} ${path}`,
            reason: "the answer has examples but no schema: its schema is inferred from the first example",
            location: this.locate(at),
            fact: "operation",
          });
        }
      }
    }
    const body = rec(rec(this.resolveResponse(op.requestBody).content)["application/json"]);
    if (body.schema) bodies.push({ schema: this.unwrap(body.schema), at: `${pointer}/requestBody` });
    // The query (and Swagger 2.0 form) parameters of a write describe what it stores, as a body would.
    const params = method === "get" || method === "delete" ? undefined : this.writeParameters(op);
    if (params) {
      bodies.push({ schema: params, at: `${pointer}/parameters` });
      this.notes.push({
        kind: "changed",
        subject: `${method.toUpperCase()} ${path}`,
        reason: `query parameters ${Object.keys(rec(params.properties)).join(", ")} become fields of the record, sent in the body`,
        location: this.locate(`${pointer}/parameters`),
        fact: "operation",
      });
    }
    // `{"versions": [...]}` / `{"version": {...}}`: a wrapper of one key names the records it holds.
    let name = segment ? snakeCase(segment) : "";
    for (const [i, b] of bodies.entries()) {
      const wrapped = oneKeyWrapper(b.schema, (x) => this.resolve(x, []));
      if (!wrapped) continue;
      bodies[i] = { schema: wrapped.schema, at: b.at };
      name = singularize(snakeCase(wrapped.key));
    }
    if (!name || named.has(name)) return undefined;
    const properties = new Set(bodies.filter((b) => isObjectSchema(b.schema)).flatMap((b) => Object.keys(rec(b.schema.properties))));
    // A lone property (`{message}`, `{count}`) is an answer, not a record; two or more over the operation's bodies make one.
    const usable = properties.size >= 2 ? bodies.filter((b) => isObjectSchema(b.schema)) : [];
    if (usable.length === 0) return undefined;
    let t = this.inline.get(name);
    for (const b of usable) {
      const part = this.table(name, b.schema, b.at);
      if (!t) {
        t = part;
        this.inline.set(name, t);
        continue;
      }
      for (const f of part.fields) if (!t.fields.some((x) => x.name === f.name)) t.fields.push(f);
      for (const fk of part.foreignKeys) if (!t.foreignKeys.some((x) => x.columns[0] === fk.columns[0])) t.foreignKeys.push(fk);
      if (t.primaryKey.length === 0) t.primaryKey = part.primaryKey;
    }
    return name;
  }

  /** A write's query and form parameters as one object schema, or undefined when it has none. */
  private writeParameters(op: Schema): Schema | undefined {
    const properties: Schema = {};
    const required: string[] = [];
    for (const raw of Array.isArray(op.parameters) ? op.parameters : []) {
      const p = this.resolve(raw, []);
      if ((p.in !== "query" && p.in !== "formData") || typeof p.name !== "string") continue;
      // 3.x puts the type under `schema`; Swagger 2.0 on the parameter itself.
      const { name: _n, in: _i, required: _r, schema, ...inline } = p;
      properties[p.name] = { ...(schema ? this.resolve(schema, []) : inline), ...(p.description ? { description: p.description } : {}) };
      if (p.required === true) required.push(p.name);
    }
    return Object.keys(properties).length > 0 ? { type: "object", properties, required } : undefined;
  }

  private unwrap(schema: unknown): Schema {
    let s = this.resolve(schema, []);
    for (let i = 0; i < 3; i++) {
      const props = rec(s.properties);
      if (s.type === "array" || s.items) s = this.resolve(s.items, []);
      else if (props.data && (Object.keys(props).length <= 3 || this.resolve(props.data, []).type === "array"))
        s = this.resolve(props.data, []);
      else break;
    }
    return s;
  }

  /** Schemas that are only `allOf` parts of another schema: they are merged, not entities of their own. */
  private allOfParts(): Map<string, string> {
    const parts = new Map<string, string>();
    const prefix = `#${this.base}`;
    for (const [name, raw] of Object.entries(this.schemas)) {
      for (const part of Array.isArray(rec(raw).allOf) ? (rec(raw).allOf as unknown[]) : []) {
        const ref = rec(part).$ref;
        if (typeof ref === "string" && ref.startsWith(prefix))
          parts.set(ref.slice(prefix.length).replace(/~1/g, "/").replace(/~0/g, "~"), name);
      }
    }
    const used = JSON.stringify(this.api.paths ?? {});
    for (const part of [...parts.keys()]) if (used.includes(`${prefix}${escapePointer(part)}"`)) parts.delete(part);
    return parts;
  }

  /** Follows `$ref`s and merges `allOf`; a chain that comes back to where it started is an error. */
  private resolve(schema: unknown, seen: string[]): Schema {
    const s = rec(schema);
    const ref = s.$ref;
    if (typeof ref === "string") {
      if (!ref.startsWith("#/")) throw new ImportError(`unresolvable $ref ${JSON.stringify(ref)}`, { file: this.file });
      if (seen.includes(ref)) {
        const chain = [...seen.slice(seen.indexOf(ref)), ref].map((r) => r.slice(1)).join(" -> ");
        throw new ImportError(`circular $ref: ${chain} never reaches a schema`, this.locate(ref.slice(1)));
      }
      return this.resolve(this.at(ref.slice(1)), [...seen, ref]);
    }
    if (Array.isArray(s.allOf)) {
      const merged: Schema = { ...s, type: "object", properties: {}, required: Array.isArray(s.required) ? [...s.required] : [] };
      delete merged.allOf;
      for (const part of s.allOf) {
        const p = this.resolve(part, seen);
        merged.properties = { ...rec(merged.properties), ...rec(p.properties) };
        merged.required = [...(merged.required as string[]), ...(Array.isArray(p.required) ? p.required : [])];
        if (!merged.description && p.description) merged.description = p.description;
      }
      merged.properties = { ...rec(merged.properties), ...rec(s.properties) };
      // `allOf: [{$ref: IntegerEnum}]` (a discriminator, a described enum) keeps the part's type and values.
      const typed = s.allOf.map((part) => this.resolve(part, seen)).find((x) => typeof x.type === "string" && x.type !== "object");
      if (typed && Object.keys(rec(merged.properties)).length === 0) {
        merged.type = typed.type;
        for (const k of ["enum", "format", "minimum", "maximum", "minLength", "maxLength", "pattern", "default"])
          if (merged[k] === undefined && typed[k] !== undefined) merged[k] = typed[k];
        delete merged.properties;
        delete merged.required;
      }
      return merged;
    }
    return s;
  }

  private at(pointer: string): unknown {
    let node: unknown = this.api;
    for (const raw of pointer.split("/").slice(1)) {
      const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      node = rec(node)[key];
      if (node === undefined) throw new ImportError(`$ref points at nothing: #${pointer}`, this.locate(pointer));
    }
    return node;
  }

  /** The schema name a `$ref` points at, when it is a named object schema (an entity). */
  private entityRef(schema: unknown): string | undefined {
    const ref = rec(schema).$ref;
    if (typeof ref !== "string" || !ref.startsWith(`#${this.base}`)) return undefined;
    const name = ref
      .slice(this.base.length + 1)
      .replace(/~1/g, "/")
      .replace(/~0/g, "~");
    const target = this.resolve(schema, []);
    if (!isObjectSchema(target) || this.isError(name)) return undefined;
    const whole = this.partOf.get(name);
    return this.resourceOf.get(whole ?? name) ?? whole ?? name;
  }

  private table(name: string, schema: Schema, pointer: string): ImportTable {
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    const fields: ImportField[] = [];
    const foreignKeys: ForeignKey[] = [];
    for (const [prop, raw] of Object.entries(rec(schema.properties))) {
      const at = `${pointer}/properties/${escapePointer(prop)}`;
      const location = this.locate(at);
      // `anyOf: [{$ref: Owner}, {type: "null"}]` is an optional reference to Owner.
      const alternatives = [
        ...(Array.isArray(rec(raw).anyOf) ? (rec(raw).anyOf as unknown[]) : []),
        ...(Array.isArray(rec(raw).oneOf) ? (rec(raw).oneOf as unknown[]) : []),
      ];
      const single = alternatives.filter((x) => rec(x).type !== "null");
      const target = this.entityRef(raw) ?? (single.length === 1 && alternatives.length === 2 ? this.entityRef(single[0]) : undefined);
      if (target) {
        const col = `${snakeCase(prop)}_id`;
        // `user_id` beside an embedded `user`: the object is the record the id names, not a second column.
        if (Object.keys(rec(schema.properties)).some((o) => o !== prop && snakeCase(o) === col)) {
          this.notes.push({
            kind: "skipped",
            subject: `${name}.${prop}`,
            reason: `the embedded ${target} is the record ${col} names; left out, ${col} is kept as the input declares it`,
            location,
            fact: "reference",
          });
          continue;
        }
        fields.push({ name: col, type: "uuid", required: required.has(prop), description: `The ${prop} (${target})`, location });
        this.notes.push({
          kind: "changed",
          subject: `${name}.${prop}`,
          reason: `the embedded ${target} object becomes a reference ${col} to its record`,
          location,
          fact: "reference",
        });
        foreignKeys.push({ columns: [col], table: target, targetColumns: [] });
        continue;
      }
      const p = this.resolve(raw, []);
      const field = this.field(prop, p, required.has(prop), location, `${name}.${prop}`);
      if (field.type === "array") {
        const itemTarget = this.entityRef(p.items);
        if (itemTarget) {
          field.arrayOf = itemTarget;
          field.itemsType = "object";
        }
      }
      fields.push(field);
    }
    const t: ImportTable = {
      name,
      fields,
      primaryKey: fields.some((f) => f.name === "id") ? ["id"] : [],
      foreignKeys,
      location: this.locate(pointer),
    };
    if (typeof schema.description === "string") t.description = schema.description;
    return t;
  }

  private field(name: string, p0: Schema, required0: boolean, location: SourceLocation, subject: string): ImportField {
    const note = (reason: string, fact: FactKind, about = subject): void => {
      this.notes.push({ kind: "changed", subject: about, reason, location, fact });
    };
    const { p, required, alternatives } = this.nullability(p0, required0, note);
    if (p.type === undefined && alternatives.length > 1 && alternatives.every((x) => isObjectSchema(x) || x.type === "object")) {
      note(`oneOf/anyOf of ${alternatives.length} object schemas becomes an object field (the alternatives are not checked)`, "type");
      return { name, type: "object", required: required && p.readOnly !== true, location };
    }
    // Alternatives of different types (`oneOf: [string, number, object]`): one type cannot hold them all.
    const kinds = [...new Set(alternatives.map((x) => (Array.isArray(x.type) ? x.type.find((t) => t !== "null") : x.type)))];
    if (p.type === undefined && kinds.length > 1)
      note(`oneOf/anyOf of ${kinds.map(String).join(", ")} becomes a string field (the other types are not kept)`, "type");
    let declared = Array.isArray(p.type) ? p.type.find((t) => t !== "null") : p.type;
    if (declared === "null") note("type null (always null) has no contract type; kept as an optional string", "type");
    // A map (`additionalProperties`) or an object without `type: object` is still an object.
    if (declared === undefined && (p.additionalProperties !== undefined || p.properties !== undefined)) declared = "object";
    const { type, format } = mapOpenApiType(
      typeof declared === "string" ? declared : undefined,
      typeof p.format === "string" ? p.format : undefined,
    );
    const f: ImportField = { name, type, required: required && p.readOnly !== true, location };
    if (typeof p.format === "string") f.sourceType = `${String(declared)}/${p.format}`;
    if (format) f.format = format;
    if (typeof p.description === "string") f.description = p.description;
    if (Array.isArray(p.enum)) f.enum = p.enum.filter((v): v is string | number => typeof v === "string" || typeof v === "number");
    else if (typeof p.const === "string" || typeof p.const === "number") f.enum = [p.const];
    if (p.default !== undefined) f.default = p.default;
    if (type === "array") this.arrayItems(f, p, note);
    const c = constraintsOf(p, type, (reason, fact, about) => note(reason, fact, about === undefined ? subject : about), name);
    if (Object.keys(c).length > 0) f.constraints = c;
    if (p.readOnly === true && /(^|_)(created|updated)_?at$/i.test(snakeCase(name)))
      f.generated = /updated/i.test(name) ? "now_on_update" : "now";
    return f;
  }

  /**
   * Nullable: 3.1 `type: [T, "null"]`, 3.0 `nullable: true`, or a `null` alternative. A contract
   * field has no null apart from being optional, so a required nullable property is optional.
   * Returns the schema with a lone non-null alternative taken for the property itself.
   */
  private nullability(
    p0: Schema,
    required0: boolean,
    note: (reason: string, fact: FactKind) => void,
  ): { p: Schema; required: boolean; alternatives: Schema[] } {
    let p = p0;
    const all = [...(Array.isArray(p.oneOf) ? p.oneOf : []), ...(Array.isArray(p.anyOf) ? p.anyOf : [])].map((x) => this.resolve(x, []));
    const isNull = (x: Schema): boolean => x.type === "null" || (Array.isArray(x.enum) && x.enum.length === 1 && x.enum[0] === null);
    const alternatives = all.filter((x) => !isNull(x));
    const nullable =
      (Array.isArray(p.type) && p.type.includes("null")) ||
      p.nullable === true ||
      p["x-nullable"] === true ||
      alternatives.length < all.length;
    if (p.type === undefined && alternatives.length === 1 && alternatives.length < all.length) {
      p = { ...(alternatives[0] as Schema), ...(p.description ? { description: p.description } : {}) };
    }
    let required = required0;
    if (nullable && required) {
      required = false;
      note("required but nullable: a contract field cannot hold null, so it is optional (absent stands for null)", "nullability");
    }
    return { p, required, alternatives };
  }

  /** The item type of an array field; an array of `oneOf` objects holds objects (never strings). */
  private arrayItems(f: ImportField, p: Schema, note: (reason: string, fact: FactKind) => void): void {
    const items = this.resolve(p.items, []);
    const it = Array.isArray(items.type) ? items.type.find((t) => t !== "null") : items.type;
    const choices = [...(Array.isArray(items.oneOf) ? items.oneOf : []), ...(Array.isArray(items.anyOf) ? items.anyOf : [])]
      .map((x) => this.resolve(x, []))
      .filter((x) => x.type !== "null");
    if (it === undefined && choices.length > 0 && choices.every((x) => isObjectSchema(x) || x.type === "object")) {
      // Which alternative an item is, is not checked.
      f.itemsType = "object";
      if (choices.length > 1)
        note(
          `an array of oneOf/anyOf ${choices.length} object schemas becomes an array of objects (the alternatives are not checked)`,
          "type",
        );
    } else
      f.itemsType = mapOpenApiType(
        typeof it === "string" ? it : typeof choices[0]?.type === "string" ? choices[0].type : undefined,
        typeof items.format === "string" ? items.format : undefined,
      ).type;
  }

  private operations(entities: ReadonlySet<string>): ImportOperation[] {
    const out: ImportOperation[] = [];
    for (const [path, item] of Object.entries(rec(this.api.paths))) {
      for (const method of METHODS) {
        const op = rec(rec(item)[method]);
        if (Object.keys(op).length === 0) continue;
        const pointer = `/paths/${escapePointer(path)}/${method}`;
        const o: ImportOperation = { method: method.toUpperCase(), path, location: this.locate(pointer) };
        const summary = typeof op.summary === "string" ? op.summary : typeof op.description === "string" ? op.description : undefined;
        if (summary) o.summary = summary;
        const table =
          this.operationSchema(op, entities) ?? fromPath(path, entities) ?? this.inlineTable(path, method, op, pointer, entities);
        if (table) o.table = table;
        if (method === "get" && this.returnsList(op)) o.returnsList = true;
        out.push(o);
        for (const callback of Object.keys(rec(op.callbacks)))
          this.notes.push({
            kind: "skipped",
            subject: `${o.method} ${path} callback ${callback}`,
            reason: "a request the API makes to the client's server; the generated app makes no outgoing calls",
            location: this.locate(`${pointer}/callbacks/${escapePointer(callback)}`),
            fact: "operation",
          });
        this.noteLinks(o, op, pointer);
      }
    }
    sharePathEntities(out);
    return out;
  }

  /**
   * A response's link objects (how a client follows the answer to another operation) are named as
   * left out: the generated app's document describes no links. The operation they lead to is
   * imported, or noted, on its own.
   */
  private noteLinks(o: ImportOperation, op: Schema, pointer: string): void {
    for (const [code, res] of Object.entries(rec(op.responses))) {
      for (const [name, raw] of Object.entries(rec(this.resolveResponse(res).links))) {
        const link = this.resolveResponse(raw);
        const target =
          typeof link.operationId === "string"
            ? ` to operation ${link.operationId}`
            : typeof link.operationRef === "string"
              ? ` to ${link.operationRef}`
              : "";
        this.notes.push({
          kind: "skipped",
          subject: `${o.method} ${o.path} link ${name}`,
          reason: `a link object${target} (how a client follows the ${code} answer); the generated API document describes no links`,
          location: this.locate(`${pointer}/responses/${escapePointer(code)}/links/${escapePointer(name)}`),
          fact: "operation",
        });
      }
    }
  }

  /** Whether the operation's 2xx JSON answer is a list: an array, or an object wrapping one (an envelope). */
  private returnsList(op: Schema): boolean {
    for (const [code, res] of Object.entries(rec(op.responses))) {
      if (!/^2/.test(code)) continue;
      const r = this.resolveResponse(res);
      for (const raw of [r.schema, ...Object.values(rec(r.content)).map((m) => rec(m).schema)]) {
        if (raw === undefined) continue;
        const s = this.resolve(raw, []);
        if (s.type === "array" || (Array.isArray(s.type) && s.type.includes("array"))) return true;
        const props = rec(s.properties);
        if (!("id" in props) && ENVELOPE_KEYS.some((k) => this.resolve(props[k], []).type === "array")) return true;
      }
    }
    return false;
  }

  /** The entity an operation returns or accepts: its 2xx response, then its request body. */
  private operationSchema(op: Schema, entities: ReadonlySet<string>): string | undefined {
    const schemas: unknown[] = [];
    for (const [code, res] of Object.entries(rec(op.responses))) {
      if (!/^2/.test(code)) continue;
      const r = this.resolveResponse(res);
      schemas.push(r.schema, ...Object.values(rec(r.content)).map((m) => rec(m).schema));
    }
    const body = this.resolveResponse(op.requestBody);
    schemas.push(...Object.values(rec(body.content)).map((m) => rec(m).schema));
    for (const param of Array.isArray(op.parameters) ? op.parameters : []) if (rec(param).in === "body") schemas.push(rec(param).schema);
    for (const s of schemas) {
      const direct = this.entityRef(s) ?? this.entityRef(rec(s).items);
      if (direct && entities.has(direct)) return direct;
    }
    return undefined;
  }

  private resolveResponse(r: unknown): Schema {
    const ref = rec(r).$ref;
    return typeof ref === "string" && ref.startsWith("#/") ? rec(this.at(ref.slice(1))) : rec(r);
  }
}

/**
 * A property's bounds, lengths and pattern. Exclusive bounds: 3.1 gives the bound itself, 3.0 and
 * Swagger a flag on minimum/maximum. On an integer the next value is the inclusive bound; on a
 * number it is kept inclusive, noted. Bounds beyond 2^53 - 1 (Discord's permission bit sets) are
 * not exact JSON numbers: the contract keeps the safe integer.
 */
function constraintsOf(
  p: Schema,
  type: string,
  note: (reason: string, fact: FactKind, about?: string) => void,
  name: string,
): NonNullable<ImportField["constraints"]> {
  const c: NonNullable<ImportField["constraints"]> = {};
  if (typeof p.minimum === "number") c.min = p.minimum;
  if (typeof p.maximum === "number") c.max = p.maximum;
  const exclusive = (bound: unknown, flag: unknown, inclusive: number | undefined, step: number): number | undefined =>
    typeof bound === "number" ? bound + step : flag === true && inclusive !== undefined ? inclusive + step : undefined;
  const step = type === "integer" ? 1 : 0;
  const lo = exclusive(p.exclusiveMinimum, p.exclusiveMinimum, c.min, step);
  const hi = exclusive(p.exclusiveMaximum, p.exclusiveMaximum, c.max, -step);
  if (lo !== undefined) c.min = lo;
  if (hi !== undefined) c.max = hi;
  if ((lo !== undefined || hi !== undefined) && type !== "integer")
    note("an exclusive bound on a number is kept as an inclusive min/max", "bounds", name);
  for (const k of ["min", "max"] as const) {
    const v = c[k];
    if (v !== undefined && Math.abs(v) > Number.MAX_SAFE_INTEGER) {
      c[k] = Math.sign(v) * Number.MAX_SAFE_INTEGER;
      note(`${k === "min" ? "minimum" : "maximum"} ${v} is beyond the exact integers of JSON (2^53 - 1); kept as ${c[k]}`, "bounds");
    }
  }
  if (typeof p.minLength === "number") c.minLength = p.minLength;
  if (typeof p.maxLength === "number") c.maxLength = p.maxLength;
  if (typeof p.pattern === "string") c.pattern = p.pattern;
  return c;
}

/** The first example of a media type: `example`, or the first of `examples` (a JSON text is parsed). */
function exampleOf(media: Schema): unknown {
  const first = Object.values(rec(media.examples))[0];
  const value = media.example ?? rec(first).value;
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

/** The JSON Schema an example value has: types from the values, formats for dates and date-times. */
function schemaOfExample(v: unknown): Schema {
  if (Array.isArray(v)) return { type: "array", items: v.length > 0 ? schemaOfExample(v[0]) : {} };
  if (v !== null && typeof v === "object")
    return { type: "object", properties: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, schemaOfExample(x)])) };
  if (typeof v === "number") return { type: Number.isInteger(v) ? "integer" : "number" };
  if (typeof v === "boolean") return { type: "boolean" };
  if (typeof v === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v) && !Number.isNaN(Date.parse(v)))
    return { type: "string", format: "date-time" };
  if (typeof v === "string" && /^\d{4}-\d{2}-\d{2}$/.test(v)) return { type: "string", format: "date" };
  return { type: "string" };
}

/** `{key: [records]}` or `{key: {record}}` with nothing beside it: the records and the key. */
function oneKeyWrapper(s: Schema, resolve: (x: unknown) => Schema): { key: string; schema: Schema } | undefined {
  const entries = Object.entries(rec(s.properties));
  if (entries.length !== 1) return undefined;
  const [key, raw] = entries[0] as [string, unknown];
  let inner = resolve(raw);
  if (inner.type === "array") inner = resolve(inner.items);
  return isObjectSchema(inner) && Object.keys(rec(inner.properties)).length >= 2 ? { key, schema: inner } : undefined;
}

function isObjectSchema(s: Schema): boolean {
  return (s.type === "object" || s.type === undefined) && Object.keys(rec(s.properties)).length > 0;
}

/** `/pets/{id}` -> the entity whose name matches `pets` in singular or plural. */
function fromPath(path: string, entities: ReadonlySet<string>): string | undefined {
  const segments = path.split("/").filter((s) => s && !s.startsWith("{"));
  for (const seg of segments.reverse()) {
    const s = snakeCase(seg);
    for (const e of entities) {
      const n = snakeCase(e);
      if (s === n || s === `${n}s` || s === `${n}es` || (n.endsWith("y") && s === `${n.slice(0, -1)}ies`)) return e;
    }
  }
  return undefined;
}

/**
 * An operation with no schema of its own (`DELETE /{dataset}/{version}/records/{id}`, answering 204)
 * serves the entity of the other operations on its path, or of the collection its item path
 * belongs to (and the reverse): one entity known on a path is the entity of all of them.
 */
export function sharePathEntities(ops: ImportOperation[]): void {
  const shape = (p: string): string => p.replace(/\/+$/, "").replace(/\{[^}]*\}/g, "{}");
  const known = new Map<string, string>();
  for (const o of ops) if (o.table !== undefined && !known.has(shape(o.path))) known.set(shape(o.path), o.table);
  for (const o of ops) {
    if (o.table !== undefined) continue;
    const p = shape(o.path);
    const parent = p.endsWith("/{}") ? p.slice(0, -3) : undefined;
    const table = known.get(p) ?? (parent ? known.get(parent) : undefined) ?? known.get(`${p}/{}`);
    if (table !== undefined) o.table = table;
  }
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
