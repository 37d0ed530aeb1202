import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import type { FactKind, ImportNote } from "../../../src/importers/model.js";
import { singularize, snakeCase } from "../../../src/importers/naming.js";
import { type RunningBackend, startGeneratedBackend } from "../backend.js";

/**
 * The independent judge of an OpenAPI import (issue 38): the app generated from the imported
 * contracts is started and its own `/openapi.json` is compared with the input document, operation
 * by operation and schema by schema, property by property (type, required, enum, length, bounds,
 * default). The input is read with swagger-parser's dereferencer, not the importer's bundler, and
 * schemas are matched to the app's models by name and properties, not by the importer's naming;
 * so a fact the importer misread shows as a difference. A difference is excused only by a note of
 * the import naming its subject and fact; any other is SILENT.
 */

type Schema = Record<string, unknown>;
const rec = (v: unknown): Schema => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Schema) : {});
const METHODS = ["get", "post", "put", "patch", "delete"];

export interface Silent {
  subject: string;
  fact: FactKind;
  detail: string;
}

export interface OpenApiJudgement {
  /** Facts the app has as the input states them. */
  carried: number;
  /** Facts that differ, each named by a `changed` note. */
  changed: number;
  /** Facts the app does not have, each named by a note. */
  leftOut: number;
  silent: Silent[];
}

/** The common judge shape the corpus bench calls (test/support/import-judges/<format>.ts). */
export async function judge(args: {
  inputPath: string;
  domainDir: string;
  notes: ImportNote[];
}): Promise<{ compared: number; silent: Silent[] }> {
  const j = await judgeOpenApi(args.inputPath, args.domainDir, args.notes);
  return { compared: j.carried + j.changed + j.leftOut + j.silent.length, silent: j.silent };
}

/**
 * Generates and starts the app of `importDir` (memory store), fetches its `/openapi.json` and
 * compares it with the document at `inputPath`; `notes` are the import's (summary JSON `notes`).
 */
export async function judgeOpenApi(inputPath: string, importDir: string, notes: readonly ImportNote[]): Promise<OpenApiJudgement> {
  const input = rec(await SwaggerParser.dereference(inputPath, { dereference: { circular: "ignore" } }));
  const out = mkdtempSync(join(tmpdir(), "charter-judge-openapi-"));
  let app: RunningBackend | undefined;
  try {
    app = await startGeneratedBackend({ domainDir: importDir, outDir: out, backend: "memory" });
    const res = await fetch(`${app.url}/openapi.json`);
    if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
    const generated = rec(await res.json());
    return compareDocuments(input, generated, notes);
  } finally {
    await app?.stop();
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * `record_id`, `recordId` and `RecordIDs` name the same thing. Singular and plural are one name
 * (English rules, `data` is `datum`): the naming convention of contracts, not a fact of the input.
 */
function nameKey(name: string): string {
  return singularize(snakeCase(name)).replace(/_/g, "");
}

/** A note's subject, `<schema>.<property>`, compared by the name keys of its two parts. */
function key(subject: string): string {
  const dot = subject.indexOf(".");
  return dot < 0 || /^[A-Z]+ \//.test(subject) ? nameKey(subject) : `${nameKey(subject.slice(0, dot))}.${nameKey(subject.slice(dot + 1))}`;
}

/** The comparison itself, on two documents (the input already dereferenced). */
export function compareDocuments(input: Schema, generated: Schema, notes: readonly ImportNote[]): OpenApiJudgement {
  const result: OpenApiJudgement = { carried: 0, changed: 0, leftOut: 0, silent: [] };
  const noteFor = (subject: string, facts: FactKind[]): ImportNote | undefined => {
    const k = key(subject);
    return notes.find((n) => key(n.subject) === k && n.fact !== undefined && facts.includes(n.fact));
  };
  /** One fact: equal, or excused by a note, or silent. */
  const fact = (subject: string, kind: FactKind, same: boolean, missing: boolean, detail: string): void => {
    if (same) {
      result.carried++;
      return;
    }
    const n = noteFor(subject, [kind]);
    if (!n) result.silent.push({ subject, fact: kind, detail });
    else if (missing || n.kind === "skipped") result.leftOut++;
    else result.changed++;
  };

  // Operations: the same method at the same path, parameters by position (PUT is served as PATCH).
  const norm = (p: string): string => p.replace(/\{[^}]+\}/g, "{}").replace(/\/+$/, "") || "/";
  const served = new Set<string>();
  for (const [path, item] of Object.entries(rec(generated.paths)))
    for (const m of METHODS) if (rec(item)[m]) served.add(`${m.toUpperCase()} ${norm(path)}`);
  for (const [path, item] of Object.entries(rec(input.paths))) {
    for (const m of METHODS) {
      if (!rec(item)[m]) continue;
      const method = m.toUpperCase();
      const here = served.has(`${method} ${norm(path)}`) || (method === "PUT" && served.has(`PATCH ${norm(path)}`));
      fact(`${method} ${path}`, "operation", here, true, here ? "" : `the app does not serve ${method} ${path}`);
    }
  }

  // Schemas: each named object schema of the input against the app's model of the same name.
  const inputSchemas = rec(input.swagger === "2.0" ? input.definitions : rec(input.components).schemas);
  const genSchemas = rec(rec(generated.components).schemas);
  const models = new Map<string, { pub: Schema; create: Schema }>();
  for (const [name, s] of Object.entries(genSchemas)) {
    const m = /^(.*)(Public|Response)$/.exec(name);
    if (!m) continue;
    const stem = m[1] as string;
    models.set(nameKey(stem), { pub: rec(s), create: rec(genSchemas[`${stem}Create`]) });
  }
  for (const [name, raw] of Object.entries(inputSchemas)) {
    const s = merged(raw);
    const props = rec(s.properties);
    if (Object.keys(props).length === 0) continue;
    // Two input schemas with one singular (`Activity`, `Activities`) cannot both be matched by name.
    const ambiguous = Object.keys(inputSchemas).some((o) => o !== name && nameKey(o) === nameKey(name));
    const model = ambiguous ? undefined : models.get(nameKey(name));
    fact(name, "table", model !== undefined, true, model ? "" : `no model of ${name} in the app${ambiguous ? " by that name" : ""}`);
    if (!model) continue;
    const genProps = rec(model.pub.properties);
    const createProps = rec(model.create.properties);
    const createRequired = new Set(Array.isArray(model.create.required) ? model.create.required.map(String) : []);
    const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
    // `_links` is the app's own (HATEOAS), never an input property.
    const own = Object.keys(genProps).filter((p) => !p.startsWith("_"));
    // The exact name first: `color` and `colors` may both be properties.
    const exact = (n: string): string => snakeCase(n).replace(/_/g, "");
    const byExact = new Map(own.map((p) => [exact(p), p]));
    const byKey = new Map(own.map((p) => [nameKey(p), p]));
    const find = (n: string): string | undefined => byExact.get(exact(n)) ?? byKey.get(nameKey(n));
    for (const [prop, rawProp] of Object.entries(props)) {
      const subject = `${name}.${prop}`;
      const p = merged(nonNull(rec(rawProp)));
      const isObjectRef =
        typeof p.$ref === "string" || ((p.type === "object" || p.type === undefined) && Object.keys(rec(p.properties)).length > 0);
      const hit = byExact.get(exact(prop)) ?? (isObjectRef ? find(`${prop}_id`) : undefined) ?? find(prop);
      if (/^id$/i.test(prop) || /^(created|updated)_?at$/i.test(prop)) {
        // The app's own id and timestamps: present whatever the input's type.
        fact(subject, "column", hit !== undefined, true, "");
        continue;
      }
      fact(subject, "column", hit !== undefined, true, `the app's ${name} has no ${prop}`);
      if (hit === undefined) continue;
      const g = nonNull(rec(genProps[hit]));
      const c = nonNull(rec(createProps[hit] ?? genProps[hit]));
      const inType = typeName(p);
      const genType = typeName(g);
      if (hit !== prop && nameKey(hit) === nameKey(`${prop}_id`)) {
        fact(subject, "reference", false, false, `an embedded ${inType} became ${hit} (${genType})`);
        continue;
      }
      fact(subject, "type", inType === genType || inType === undefined, false, `${inType} in the input, ${genType} in the app`);
      const readOnly = p.readOnly === true;
      const inRequired = required.has(prop) && !readOnly && !nullable(p) && p.default === undefined;
      const genRequired = createRequired.has(hit);
      if (Object.keys(createProps).length > 0 && !readOnly)
        fact(
          subject,
          "nullability",
          inRequired === genRequired,
          false,
          `${inRequired ? "required" : "optional"} in the input, ${genRequired ? "required" : "optional"} in the app`,
        );
      const inEnum = enumOf(p);
      if (inEnum) {
        const genEnum = enumOf(c) ?? enumOf(g);
        const same = genEnum !== undefined && sameSet(inEnum, genEnum);
        fact(
          subject,
          "enum",
          same,
          genEnum === undefined,
          `enum ${JSON.stringify(inEnum)} in the input, ${JSON.stringify(genEnum ?? null)} in the app`,
        );
      }
      for (const [k, kind] of [
        ["maxLength", "length"],
        ["minLength", "length"],
        ["maximum", "bounds"],
        ["minimum", "bounds"],
      ] as const) {
        const v = p[k];
        if (typeof v !== "number" || (k === "minLength" && v === 0)) continue;
        fact(subject, kind, c[k] === v, c[k] === undefined, `${k} ${v} in the input, ${String(c[k] ?? "none")} in the app`);
      }
      if (p.default !== undefined && p.default !== null && !readOnly)
        fact(
          subject,
          "default",
          JSON.stringify(c.default) === JSON.stringify(p.default),
          c.default === undefined,
          `default ${JSON.stringify(p.default)} in the input, ${JSON.stringify(c.default ?? null)} in the app`,
        );
    }
  }
  return result;
}

/** `allOf` parts merged (the dereferenced document has no `$ref` left but circular ones). */
function merged(raw: unknown): Schema {
  const s = rec(raw);
  if (!Array.isArray(s.allOf)) return s;
  const out: Schema = { ...s, properties: {}, required: Array.isArray(s.required) ? [...s.required] : [] };
  delete out.allOf;
  for (const part of s.allOf) {
    const p = merged(part);
    out.properties = { ...rec(out.properties), ...rec(p.properties) };
    out.required = [...(out.required as unknown[]), ...(Array.isArray(p.required) ? p.required : [])];
    for (const k of ["type", "enum", "format", "maxLength", "minLength", "maximum", "minimum", "default"])
      if (out[k] === undefined && p[k] !== undefined) out[k] = p[k];
  }
  out.properties = { ...rec(out.properties), ...rec(s.properties) };
  if (Object.keys(rec(out.properties)).length === 0) delete out.properties;
  return out;
}

function nullable(s: Schema): boolean {
  if (s.nullable === true || s["x-nullable"] === true) return true;
  if (Array.isArray(s.type) && s.type.includes("null")) return true;
  return [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])].some((x) => rec(x).type === "null");
}

/** `anyOf`/`oneOf: [T, {type: null}]` (pydantic's optional field, 3.1's nullable reference): the T. */
function nonNull(s: Schema): Schema {
  for (const k of ["anyOf", "oneOf"] as const) {
    const all = Array.isArray(s[k]) ? (s[k] as unknown[]).map(rec) : [];
    const alts = all.filter((x) => x.type !== "null");
    if (alts.length === 1 && all.length === 2) {
      const out: Schema = { ...s, ...(alts[0] as Schema) };
      delete out[k];
      return out;
    }
  }
  return s;
}

/** The JSON type of a schema, `object` for one with properties or alternatives of objects. */
function typeName(s0: Schema): string | undefined {
  const s = nonNull(s0);
  if (Array.isArray(s.type)) return s.type.find((t) => t !== "null") as string | undefined;
  if (typeof s.type === "string") return s.type === "number" && s.format === undefined ? "number" : s.type;
  if (s.properties || s.additionalProperties) return "object";
  const alts = [...(Array.isArray(s.oneOf) ? s.oneOf : []), ...(Array.isArray(s.anyOf) ? s.anyOf : [])].map(rec);
  if (alts.length > 0) {
    const types = new Set(alts.map((a) => typeName(a)).filter((t) => t !== "null"));
    if (types.size === 1) return [...types][0];
    return [...types].every((t) => t === "object") ? "object" : [...types].sort().join("|");
  }
  if (s.enum) return typeof (s.enum as unknown[])[0] === "number" ? "number" : "string";
  return undefined;
}

function enumOf(s: Schema): unknown[] | undefined {
  if (Array.isArray(s.enum)) return s.enum.filter((v) => v !== null);
  if (s.const !== undefined) return [s.const];
  return undefined;
}

function sameSet(a: unknown[], b: unknown[]): boolean {
  const sa = new Set(a.map((v) => JSON.stringify(v)));
  const sb = new Set(b.map((v) => JSON.stringify(v)));
  return sa.size === sb.size && [...sa].every((v) => sb.has(v));
}
