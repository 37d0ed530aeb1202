import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { PathSegments } from "../compiler/context.js";
import { type Kind, SCHEMA_DIR, SCHEMA_FILES } from "../contracts/index.js";

type Schema = Record<string, unknown>;

/** The published JSON Schemas, read once: completion offers what they allow and nothing else. */
let schemas: Map<string, Schema> | null = null;
function schemaFile(name: string): Schema {
  if (!schemas) schemas = new Map(SCHEMA_FILES.map((f) => [f, JSON.parse(readFileSync(join(SCHEMA_DIR, f), "utf8")) as Schema]));
  return schemas.get(name) ?? {};
}

/** The subschemas `s` stands for: its $ref resolved, its allOf/anyOf/oneOf/then branches flattened. */
function expand(s: unknown, file: string, out: { schema: Schema; file: string }[] = [], depth = 0): { schema: Schema; file: string }[] {
  if (!s || typeof s !== "object" || depth > 12) return out;
  const schema = s as Schema;
  out.push({ schema, file });
  if (typeof schema.$ref === "string") {
    const [target, pointer] = schema.$ref.split("#");
    const f = target ? target : file;
    let node: unknown = schemaFile(f);
    for (const seg of (pointer ?? "").split("/").filter(Boolean)) node = (node as Schema)?.[seg];
    expand(node, f, out, depth + 1);
  }
  for (const key of ["allOf", "anyOf", "oneOf"]) {
    const list = schema[key];
    if (Array.isArray(list)) for (const b of list) expand(b, file, out, depth + 1);
  }
  if (schema.then) expand(schema.then, file, out, depth + 1);
  return out;
}

/** The schemas that apply at `path` of a contract of `kind`. */
function schemasAt(kind: Kind | null, path: PathSegments): { schema: Schema; file: string }[] {
  let current = expand(schemaFile("contract.schema.json"), "contract.schema.json").filter((s) => !s.schema.then);
  for (const [i, seg] of path.entries()) {
    if (i === 0 && seg === "spec" && kind) {
      current = expand(schemaFile(`${kind.toLowerCase()}.schema.json`), `${kind.toLowerCase()}.schema.json`);
      continue;
    }
    const next: { schema: Schema; file: string }[] = [];
    for (const { schema, file } of current) {
      const props = schema.properties as Record<string, unknown> | undefined;
      if (typeof seg === "number") {
        if (schema.items) expand(schema.items, file, next);
      } else if (props && seg in props) {
        expand(props[seg], file, next);
      } else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
        expand(schema.additionalProperties, file, next);
      } else if (schema.patternProperties) {
        for (const p of Object.values(schema.patternProperties as Record<string, unknown>)) expand(p, file, next);
      }
    }
    current = next;
  }
  return current;
}

export interface SchemaKey {
  name: string;
  description?: string;
  required: boolean;
}

/** Keys the schema allows in the mapping at `path`. */
export function schemaKeys(kind: Kind | null, path: PathSegments): SchemaKey[] {
  const out = new Map<string, SchemaKey>();
  for (const { schema } of schemasAt(kind, path)) {
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    for (const [name, def] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
      const description = typeof def?.description === "string" ? def.description : undefined;
      const prev = out.get(name);
      out.set(name, {
        name,
        required: required.has(name) || !!prev?.required,
        ...(description ? { description } : prev?.description ? { description: prev.description } : {}),
      });
    }
  }
  return [...out.values()];
}

/** Values the schema enumerates at `path` (enum, const, booleans). */
export function schemaValues(kind: Kind | null, path: PathSegments): string[] {
  const out = new Set<string>();
  for (const { schema } of schemasAt(kind, path)) {
    if (Array.isArray(schema.enum)) for (const v of schema.enum) out.add(String(v));
    if (schema.const !== undefined) out.add(String(schema.const));
    if (schema.type === "boolean") {
      out.add("true");
      out.add("false");
    }
  }
  return [...out];
}
