import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { getSchema } from "@mrleebo/prisma-ast";
import type { ContractType, ForeignKey, ImportField, ImportModel, ImportNote, ImportTable, SourceLocation } from "../model.js";
import { ImportError } from "../model.js";
import { readSource } from "./read.js";

type Node = Record<string, unknown>;
const rec = (v: unknown): Node => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Node) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const PRISMA_TYPES: Record<string, ContractType> = {
  String: "string",
  Int: "integer",
  BigInt: "integer",
  Float: "number",
  Decimal: "number",
  Boolean: "boolean",
  DateTime: "datetime",
  Json: "object",
  Bytes: "string",
};

/**
 * Reads a Prisma schema with @mrleebo/prisma-ast into the neutral model: one `schema.prisma`, or a
 * folder of `.prisma` files (Prisma's multi-file schema), read as one schema.
 */
export function readPrismaSchema(path: string): ImportModel {
  let files = [path];
  try {
    if (statSync(path).isDirectory())
      files = readdirSync(path)
        .filter((f) => f.endsWith(".prisma"))
        .sort()
        .map((f) => join(path, f));
  } catch {
    // A missing file is reported by the reader, with its name.
  }
  if (files.length === 0) throw new ImportError("no .prisma files in the directory", { file: path });
  return prismaModelOf(files.map((file) => ({ file, text: readSource(file) })));
}

export function prismaModel(text: string, file: string): ImportModel {
  return prismaModelOf([{ file, text }]);
}

function parsePrisma(text: string, file: string): Node {
  try {
    return rec(getSchema(text));
  } catch (e) {
    const token = rec(rec(e).token);
    const loc: SourceLocation = { file };
    if (typeof token.startLine === "number") loc.line = token.startLine;
    if (typeof token.startColumn === "number") loc.column = token.startColumn;
    const found = typeof token.image === "string" ? `unexpected ${JSON.stringify(token.image)}` : "syntax error";
    throw new ImportError(`invalid Prisma schema: ${found}`, loc);
  }
}

function prismaModelOf(sources: readonly { file: string; text: string }[]): ImportModel {
  const notes: ImportNote[] = [];
  // Each declaration keeps the file it came from, for locations.
  const list = sources.flatMap(({ file, text }) =>
    arr(parsePrisma(text, file).list)
      .map(rec)
      .map((n): Node => ({ ...n, __lineOf: lineFinder(text, file) })),
  );
  const enums = new Map<string, string[]>();
  for (const e of list.filter((n) => n.type === "enum")) {
    enums.set(
      String(e.name),
      arr(e.enumerators)
        .map(rec)
        .filter((x) => x.type === "enumerator")
        .map((x) => String(x.name)),
    );
  }
  const models = list.filter((n) => n.type === "model");
  const modelNames = new Set(models.map((m) => String(m.name)));
  const tables: ImportTable[] = [];
  for (const m of models) {
    const name = String(m.name);
    const lineOf = m.__lineOf as ReturnType<typeof lineFinder>;
    const t: ImportTable = { name, fields: [], primaryKey: [], foreignKeys: [], location: lineOf(`model ${name}`) };
    const props = arr(m.properties).map(rec);
    for (const p of props.filter((x) => x.type === "attribute")) {
      const args = arr(p.args).map((a) => rec(a).value);
      if (p.name === "map") {
        const mapped = unquote(args[0]);
        if (mapped) t.tableName = mapped;
      } else if (p.name === "id") t.primaryKey = arrayArgs(args[0]);
      else if (p.name === "index" || p.name === "unique") {
        const cols = arrayArgs(args[0]);
        if (cols.length > 1)
          notes.push({
            kind: "skipped",
            subject: `@@${String(p.name)}([${cols.join(", ")}]) on ${name}`,
            reason: `composite ${p.name === "unique" ? "unique constraint" : "index"} is not expressible in a contract`,
            location: t.location,
          });
      }
    }
    for (const p of props.filter((x) => x.type === "field")) {
      const fieldName = String(p.name);
      const fieldType = typeName(p.fieldType);
      const attrs = new Map(
        arr(p.attributes)
          .map(rec)
          .map((a) => [String(a.name), arr(a.args).map((x) => rec(x).value)]),
      );
      const location = lineOf(`${fieldName} `, t.location.line);
      if (modelNames.has(fieldType)) {
        // A relation field: the foreign key lives in `fields:` of @relation; list sides are back-references.
        const rel = attrs.get("relation");
        const kv = new Map(
          (rel ?? [])
            .map(rec)
            .filter((x) => x.type === "keyValue")
            .map((x) => [String(x.key), arrayArgs(x.value)]),
        );
        const cols = kv.get("fields");
        if (cols && cols.length > 0) {
          const fk: ForeignKey = { columns: cols, table: fieldType, targetColumns: kv.get("references") ?? [] };
          const onDelete = (rel ?? []).map(rec).find((x) => x.type === "keyValue" && x.key === "onDelete")?.value;
          if (typeof onDelete === "string") {
            fk.onDeleteSource = onDelete;
            fk.onDelete = onDelete === "Cascade" ? "cascade" : onDelete === "SetNull" ? "set_null" : "restrict";
          }
          t.foreignKeys.push(fk);
        }
        continue;
      }
      const f: ImportField = { name: fieldName, type: "string", sourceType: fieldType, location };
      const enumValues = enums.get(fieldType);
      if (enumValues) f.enum = enumValues;
      else if (PRISMA_TYPES[fieldType]) f.type = PRISMA_TYPES[fieldType];
      else
        notes.push({ kind: "changed", subject: `${name}.${fieldName}`, reason: `type ${fieldType} is unknown; read as string`, location });
      if (p.array === true) {
        f.itemsType = f.type;
        f.type = "array";
        if (f.enum)
          notes.push({
            kind: "changed",
            subject: `${name}.${fieldName}`,
            reason: `a list of ${fieldType} values: a contract array has no enum of its items; kept as an array of strings`,
            location,
          });
        delete f.enum;
      } else if (fieldType === "Json")
        notes.push({
          kind: "changed",
          subject: `${name}.${fieldName}`,
          reason: "Json becomes an object field: JSON arrays and plain values are refused by the contract's type",
          location,
        });
      if (p.optional !== true && p.array !== true) f.required = true;
      if (attrs.has("id")) t.primaryKey = [fieldName];
      if (attrs.has("unique")) f.unique = true;
      if (attrs.has("updatedAt")) f.generated = "now_on_update";
      const mapped = attrs.get("map");
      if (mapped) f.name = unquote(mapped[0]) ?? fieldName;
      const def = attrs.get("default")?.[0];
      if (def !== undefined) applyDefault(f, def);
      if (rec(def).type === "function" && rec(def).name === "now" && f.generated === undefined)
        notes.push({
          kind: "changed",
          subject: `${name}.${fieldName}`,
          reason: "@default(now()) has no contract equivalent outside a creation time; the field is optional instead",
          location,
        });
      t.fields.push(f);
    }
    // A relation's `fields:` name the Prisma field; when that field is @map-ped, the column is renamed too.
    for (const fk of t.foreignKeys) {
      fk.columns = fk.columns.map((c) => {
        const p = props.find((x) => x.type === "field" && x.name === c);
        const mapArg = arr(p?.attributes)
          .map(rec)
          .find((a) => a.name === "map");
        return mapArg ? (unquote(rec(arr(mapArg.args)[0]).value) ?? c) : c;
      });
    }
    tables.push(t);
  }
  return { format: "prisma", files: sources.map((s) => s.file), tables, operations: [], notes };
}

function applyDefault(f: ImportField, value: unknown): void {
  const fn = rec(value);
  if (fn.type === "function") {
    const name = String(fn.name);
    // Only a creation time is the database's to fill; another now() default is a value clients may set.
    if (name === "now" && /^(created|inserted)(_?at|_?on)$/i.test(f.name)) f.generated = "now";
    else if (name === "now") f.required = false;
    else if (name === "uuid" || name === "cuid" || name === "ulid" || name === "nanoid") f.generated = "uuid";
    else if (name === "autoincrement") f.generated = "increment";
    return;
  }
  if (typeof value !== "string") return;
  if (f.enum) f.default = value;
  else if (f.type === "boolean") f.default = value === "true";
  else if (f.type === "integer" || f.type === "number") f.default = Number(value);
  else f.default = unquote(value) ?? value;
}

/** A field's type as written: `String`, or `Unsupported("tsvector")` (prisma-ast gives it as a node). */
function typeName(t: unknown): string {
  if (typeof t === "string") return t;
  const fn = rec(t);
  if (fn.type === "function") return `${String(fn.name)}(${arr(fn.params).map(String).join(", ")})`;
  return JSON.stringify(t);
}

function unquote(v: unknown): string | undefined {
  if (typeof v !== "string") return undefined;
  return v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? (JSON.parse(v) as string) : v;
}

function arrayArgs(v: unknown): string[] {
  const a = rec(v);
  if (a.type === "array") return arr(a.args).map(String);
  const fields = rec(a.value);
  if (a.type === "keyValue" && a.key === "fields") return arr(fields.args).map(String);
  return [];
}

/** prisma-ast keeps no positions; the line of a declaration is found in the text (after `after`). */
function lineFinder(text: string, file: string): (needle: string, after?: number) => SourceLocation {
  const lines = text.split("\n");
  return (needle, after = 0) => {
    for (let i = after; i < lines.length; i++) {
      const line = lines[i] as string;
      const col = line.indexOf(needle);
      if (col >= 0 && line.slice(0, col).trim() === "") return { file, line: i + 1, column: col + 1 };
    }
    return { file };
  };
}
