import { pascalCase } from "../compiler/naming.js";
import { asRecord as rec } from "../contracts/unchecked.js";
import { entityName, snakeCase } from "./naming.js";

type Schema = Record<string, unknown>;
const METHODS = ["get", "post", "put", "patch", "delete"];

export interface PathDifference {
  method: string;
  path: string;
  /** `kept`: in both; `missing`: only in the original; `added`: only in the generated app. */
  status: "kept" | "missing" | "added";
  /** The generated operation that matches (PUT becomes PATCH, parameters are renamed to `{id}`). */
  as?: string;
}

export interface SchemaDifference {
  schema: string;
  property: string;
  status: "kept" | "missing" | "added";
  /** `type` of each side when both have it and they differ. */
  types?: [string, string];
}

export interface RoundTrip {
  paths: PathDifference[];
  schemas: SchemaDifference[];
}

/**
 * Compares the original spec with the generated app's OpenAPI document, by path and by schema, so
 * the user sees what the import kept. Paths are compared with parameter names ignored and PUT
 * matched to the generated PATCH; an original schema is compared with the generated
 * `<Entity>Public` model (`<Entity>Response` in older generated apps), property names normalised to
 * snake_case.
 */
export function compareOpenApi(original: Schema, generated: Schema): RoundTrip {
  const norm = (p: string): string => p.replace(/\{[^}]+\}/g, "{}").replace(/\/+$/, "") || "/";
  const gen = new Map<string, string>();
  for (const [path, item] of Object.entries(rec(generated.paths))) {
    for (const m of METHODS) if (rec(item)[m]) gen.set(`${m.toUpperCase()} ${norm(path)}`, `${m.toUpperCase()} ${path}`);
  }
  const paths: PathDifference[] = [];
  const matched = new Set<string>();
  for (const [path, item] of Object.entries(rec(original.paths))) {
    for (const m of METHODS) {
      if (!rec(item)[m]) continue;
      const method = m.toUpperCase();
      const keys = [`${method} ${norm(path)}`, ...(method === "PUT" ? [`PATCH ${norm(path)}`] : [])];
      const key = keys.find((k) => gen.has(k));
      if (key) {
        matched.add(key);
        paths.push({ method, path, status: "kept", as: gen.get(key) as string });
      } else paths.push({ method, path, status: "missing" });
    }
  }
  for (const [key, shown] of gen) {
    if (matched.has(key)) continue;
    const [method, path] = shown.split(" ") as [string, string];
    if (path === "/health") continue;
    paths.push({ method, path, status: "added" });
  }
  const originalSchemas = rec(original.swagger === "2.0" ? original.definitions : rec(original.components).schemas);
  const generatedSchemas = rec(rec(generated.components).schemas);
  const schemas: SchemaDifference[] = [];
  for (const [name, raw] of Object.entries(originalSchemas)) {
    const resolved = resolveLocal(original, raw, 0);
    if (Object.keys(rec(resolved.properties)).length === 0) continue;
    const model = pascalCase(entityName(name));
    const target = rec(generatedSchemas[`${model}Public`] ?? generatedSchemas[`${model}Response`]);
    const genProps = rec(target.properties);
    if (Object.keys(genProps).length === 0) {
      schemas.push({ schema: name, property: "*", status: "missing" });
      continue;
    }
    const own = rec(resolved.properties);
    const seen = new Set<string>();
    for (const [prop, def] of Object.entries(own)) {
      const snake = snakeCase(prop);
      const candidates = [snake, `${snake}_id`];
      const hit = candidates.find((c) => c in genProps);
      if (!hit) {
        schemas.push({ schema: name, property: prop, status: "missing" });
        continue;
      }
      seen.add(hit);
      const a = typeOf(rec(def));
      const b = typeOf(rec(genProps[hit]));
      const d: SchemaDifference = { schema: name, property: prop, status: "kept" };
      if (a && b && a !== b) d.types = [a, b];
      schemas.push(d);
    }
    for (const prop of Object.keys(genProps)) {
      if (!seen.has(prop) && !["_links", "created_at", "updated_at", "id"].includes(prop))
        schemas.push({ schema: name, property: prop, status: "added" });
    }
  }
  return { paths, schemas };
}

/** Follows local `$ref`s and merges `allOf`, as far as a comparison needs (depth-bounded). */
function resolveLocal(root: Schema, schema: unknown, depth: number): Schema {
  const s = rec(schema);
  if (depth > 20) return s;
  if (typeof s.$ref === "string" && s.$ref.startsWith("#/")) {
    let node: unknown = root;
    for (const part of s.$ref.slice(2).split("/")) node = rec(node)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    return resolveLocal(root, node, depth + 1);
  }
  if (Array.isArray(s.allOf)) {
    const properties: Schema = {};
    for (const part of s.allOf) Object.assign(properties, rec(resolveLocal(root, part, depth + 1).properties));
    return { ...s, properties: { ...properties, ...rec(s.properties) } };
  }
  return s;
}

function typeOf(s: Schema): string | undefined {
  if (typeof s.$ref === "string") return "object";
  if (typeof s.type === "string") return s.type;
  const any = Array.isArray(s.anyOf) ? s.anyOf.map(rec).find((x) => x.type !== "null") : undefined;
  return any ? typeOf(any) : undefined;
}

/** The comparison as text: each path and schema property with `=` kept, `-` missing, `+` added. */
export function roundTripText(r: RoundTrip): string {
  const mark = { kept: "=", missing: "-", added: "+" } as const;
  const out: string[] = ["Paths:"];
  for (const p of r.paths)
    out.push(`  ${mark[p.status]} ${p.method} ${p.path}${p.as && p.as !== `${p.method} ${p.path}` ? `  (as ${p.as})` : ""}`);
  out.push("Schemas:");
  for (const s of r.schemas)
    out.push(`  ${mark[s.status]} ${s.schema}.${s.property}${s.types ? `  (${s.types[0]} -> ${s.types[1]})` : ""}`);
  const count = (xs: { status: string }[], st: string): number => xs.filter((x) => x.status === st).length;
  out.push(
    `Kept ${count(r.paths, "kept")} of ${r.paths.length - count(r.paths, "added")} operations and ${count(r.schemas, "kept")} of ${r.schemas.length - count(r.schemas, "added")} schema properties; ${count(r.paths, "added")} operations and ${count(r.schemas, "added")} properties added`,
  );
  return `${out.join("\n")}\n`;
}
