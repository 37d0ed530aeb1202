import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { getSchema } from "@mrleebo/prisma-ast";
import { asRecord as rec } from "../../contracts/unchecked.js";
import type { ContractType, FactKind, ForeignKey, ImportField, ImportModel, ImportNote, ImportTable, SourceLocation } from "../model.js";
import { ImportError } from "../model.js";
import { readSource } from "./read.js";

type Node = Record<string, unknown>;
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
    // Prisma reads a schema folder with its subfolders (`prisma/schema.prisma` beside `prisma/models/*.prisma`).
    if (statSync(path).isDirectory())
      files = (readdirSync(path, { recursive: true }) as string[])
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

type LineOf = ReturnType<typeof lineFinder>;

/** A top-level declaration of prisma-ast (model, enum, view, type), with the line finder of its file. */
type Declaration = Node & { lineOf: LineOf };

function prismaModelOf(sources: readonly { file: string; text: string }[]): ImportModel {
  const notes: ImportNote[] = [];
  // Each declaration keeps the file it came from, for locations.
  const list = sources.flatMap(({ file, text }) =>
    arr(parsePrisma(text, file).list)
      .map(rec)
      .map((n): Declaration => ({ ...n, lineOf: lineFinder(text, file) })),
  );
  const enums = enumsOf(list);
  notes.push(...leftOut(list));
  const models = list.filter((n) => n.type === "model" && !ignored(n.properties));
  const modelNames = new Set(models.map((m) => String(m.name)));
  const tables = models.map((m) => prismaTable(m, modelNames, enums, notes));
  return { format: "prisma", files: sources.map((s) => s.file), tables, operations: [], notes };
}

function enumsOf(list: readonly Declaration[]): Map<string, string[]> {
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
  return enums;
}

const ignored = (props: unknown): boolean =>
  arr(props)
    .map(rec)
    .some((a) => a.type === "attribute" && a.name === "ignore");

/** Views, composite types and @@ignore-d models: declarations that are not entities, each with a note. */
function leftOut(list: readonly Declaration[]): ImportNote[] {
  const notes: ImportNote[] = [];
  for (const n of list.filter((x) => x.type === "view" || x.type === "type")) {
    notes.push({
      kind: "skipped",
      subject: String(n.name),
      reason:
        n.type === "view"
          ? "a Prisma view is a query over other tables, not stored data; not an entity"
          : "a composite type (MongoDB's embedded document) is not an entity; left out",
      location: n.lineOf(`${String(n.type)} ${String(n.name)}`),
      fact: "table",
    });
  }
  for (const m of list.filter((n) => n.type === "model" && ignored(n.properties))) {
    notes.push({
      kind: "skipped",
      subject: String(m.name),
      reason: "@@ignore: Prisma's client leaves this model out, and so does the import",
      location: m.lineOf(`model ${String(m.name)}`),
      fact: "table",
    });
  }
  return notes;
}

function prismaTable(
  m: Declaration,
  modelNames: ReadonlySet<string>,
  enums: ReadonlyMap<string, string[]>,
  notes: ImportNote[],
): ImportTable {
  const name = String(m.name);
  const t: ImportTable = { name, fields: [], primaryKey: [], foreignKeys: [], location: m.lineOf(`model ${name}`) };
  const props = arr(m.properties).map(rec);
  const uniqueOne = modelAttributes(t, props, notes);
  for (const p of props.filter((x) => x.type === "field")) {
    const location = m.lineOf(`${String(p.name)} `, t.location.line);
    if (modelNames.has(typeName(p.fieldType))) relationField(t, p, location, notes);
    else scalarField(t, p, location, enums, uniqueOne, notes);
  }
  // A key field that is @map-ped ("id String @id @map(\"user_id\")") is keyed by its column name,
  // as every other place that names the key does.
  t.primaryKey = t.primaryKey.map((k) => mappedColumn(props, k));
  // A relation's `fields:` name the Prisma field; when that field is @map-ped, the column is renamed too.
  for (const fk of t.foreignKeys) fk.columns = fk.columns.map((c) => mappedColumn(props, c));
  return t;
}

/**
 * The model's `@@` attributes: its table name (@@map), key (@@id), and the notes of composite
 * uniques and indexes. Returns the fields a one-column `@@unique([email])` makes unique, the
 * same fact as `@unique` on the field.
 */
function modelAttributes(t: ImportTable, props: readonly Node[], notes: ImportNote[]): Set<string> {
  const uniqueOne = new Set<string>();
  for (const p of props.filter((x) => x.type === "attribute")) {
    const args = arr(p.args).map((a) => rec(a).value);
    if (p.name === "map") {
      const mapped = unquote(args[0]);
      if (mapped) t.tableName = mapped;
    } else if (p.name === "id") t.primaryKey = arrayArgs(args[0]);
    else if (p.name === "unique" && arrayArgs(args[0]).length === 1) uniqueOne.add(arrayArgs(args[0])[0] as string);
    else if (p.name === "index" || p.name === "unique") {
      const cols = arrayArgs(args[0]);
      if (cols.length > 1 && p.name === "unique")
        notes.push({
          kind: "skipped",
          subject: t.name,
          reason: `@@unique([${cols.join(", ")}]): a composite unique constraint is not expressible in a contract`,
          location: t.location,
          fact: "unique",
        });
      else if (cols.length > 1)
        notes.push({
          kind: "skipped",
          subject: `@@index([${cols.join(", ")}]) on ${t.name}`,
          reason: "composite index is not expressible in a contract",
          location: t.location,
        });
    }
  }
  return uniqueOne;
}

/** A field's attributes by name, each with its argument values. */
function attributesOf(p: Node): Map<string, unknown[]> {
  return new Map(
    arr(p.attributes)
      .map(rec)
      .map((a) => [String(a.name), arr(a.args).map((x) => rec(x).value)]),
  );
}

/** A relation field: the foreign key lives in `fields:` of @relation; list sides are back-references. */
function relationField(t: ImportTable, p: Node, location: SourceLocation, notes: ImportNote[]): void {
  const rel = attributesOf(p).get("relation");
  const kv = new Map(
    (rel ?? [])
      .map(rec)
      .filter((x) => x.type === "keyValue")
      .map((x) => [String(x.key), arrayArgs(x.value)]),
  );
  const cols = kv.get("fields");
  if (cols && cols.length > 1)
    notes.push({
      kind: "skipped",
      subject: `${t.name}.${String(p.name)}`,
      reason: `composite foreign key (${cols.join(", ")}) is not expressible in a contract; the columns stay plain fields`,
      location,
      fact: "reference",
    });
  if (!cols || cols.length === 0) return;
  const fk: ForeignKey = { columns: cols, table: typeName(p.fieldType), targetColumns: kv.get("references") ?? [] };
  const onDelete = (rel ?? []).map(rec).find((x) => x.type === "keyValue" && x.key === "onDelete")?.value;
  if (typeof onDelete === "string") {
    fk.onDeleteSource = onDelete;
    fk.onDelete = onDelete === "Cascade" ? "cascade" : onDelete === "SetNull" ? "set_null" : "restrict";
  }
  t.foreignKeys.push(fk);
}

/** A scalar or enum field: its type (and native type), list-ness, nullability, key, uniqueness, column name and default. */
function scalarField(
  t: ImportTable,
  p: Node,
  location: SourceLocation,
  enums: ReadonlyMap<string, string[]>,
  uniqueOne: ReadonlySet<string>,
  notes: ImportNote[],
): void {
  const fieldName = String(p.name);
  const fieldType = typeName(p.fieldType);
  const attrs = attributesOf(p);
  const subject = `${t.name}.${fieldName}`;
  const note = (kind: ImportNote["kind"], fact: FactKind, reason: string): void => {
    notes.push({ kind, subject, reason, location, fact });
  };
  if (attrs.has("ignore")) {
    note("skipped", "column", "@ignore: Prisma's client leaves this field out, and so does the import");
    return;
  }
  const f: ImportField = { name: fieldName, type: "string", sourceType: fieldType, location };
  applyType(f, p, fieldType, enums, note);
  if (p.optional !== true && p.array !== true) f.required = true;
  if (attrs.has("id")) t.primaryKey = [fieldName];
  if (attrs.has("unique") || uniqueOne.has(fieldName)) f.unique = true;
  if (attrs.has("updatedAt")) f.generated = "now_on_update";
  const mapped = attrs.get("map");
  if (mapped) f.name = unquote(mapped[0]) ?? fieldName;
  const def = attrs.get("default")?.[0];
  if (def !== undefined) applyDefault(f, fieldType, def, note);
  if (rec(def).type === "function" && rec(def).name === "now" && f.generated === undefined)
    note("changed", "default", "@default(now()) has no contract equivalent outside a creation time; the field is optional instead");
  t.fields.push(f);
}

type Note = (kind: ImportNote["kind"], fact: FactKind, reason: string) => void;

/** The field's contract type: an enum, a Prisma scalar, its native type (`@db.VarChar(255)`), a list of them. */
function applyType(f: ImportField, p: Node, fieldType: string, enums: ReadonlyMap<string, string[]>, note: Note): void {
  const enumValues = enums.get(fieldType);
  if (enumValues) f.enum = enumValues;
  else if (PRISMA_TYPES[fieldType]) f.type = PRISMA_TYPES[fieldType];
  else note("changed", "type", `type ${fieldType} is unknown; read as string`);
  if (fieldType === "Bytes") note("changed", "type", "Bytes becomes a string field: binary data is carried as text (base64)");
  const native = arr(p.attributes)
    .map(rec)
    .find((a) => a.group === "db");
  if (fieldType === "Decimal" && native === undefined)
    note("changed", "type", "Decimal becomes a number: exact decimal arithmetic (Decimal(65, 30)) is not kept");
  // `@db.VarChar(255)`, `@db.Uuid`: the column's native type (the attribute in the `db` group).
  if (native)
    applyNativeType(
      f,
      String(native.name),
      arr(native.args).map((x) => rec(x).value),
      note,
    );
  if (p.array === true) {
    f.itemsType = f.type;
    f.type = "array";
    if (f.enum)
      note("changed", "enum", `a list of ${fieldType} values: a contract array has no enum of its items; kept as an array of strings`);
    delete f.enum;
  }
  if (fieldType === "Json")
    note("changed", "type", "Json becomes an object field: JSON arrays and plain values are refused by the contract's type");
}

/** The column a Prisma field is stored in: its `@map("...")` name, else the field's own. */
function mappedColumn(props: readonly Node[], field: string): string {
  const p = props.find((x) => x.type === "field" && x.name === field);
  const mapArg = arr(p?.attributes)
    .map(rec)
    .find((a) => a.name === "map");
  return mapArg ? (unquote(rec(arr(mapArg.args)[0]).value) ?? field) : field;
}

function applyDefault(f: ImportField, fieldType: string, value: unknown, note: Note): void {
  const fn = rec(value);
  if (fn.type === "function") {
    const name = String(fn.name);
    // Only a creation time is the database's to fill; another now() default is a value clients may set.
    if (name === "now" && /^(created|inserted)(_?at|_?on)$/i.test(f.name)) f.generated = "now";
    else if (name === "now") f.required = false;
    else if (name === "uuid") f.generated = "uuid";
    else if (name === "cuid" || name === "ulid" || name === "nanoid") {
      f.generated = "uuid";
      note("changed", "default", `@default(${name}()) ids become UUIDs (the contract's generated id)`);
    } else if (name === "autoincrement") f.generated = "increment";
    else {
      // dbgenerated("..."), sequence(), auto(): the database's own expression, which a contract cannot hold.
      f.required = false;
      note(
        "skipped",
        "default",
        `@default(${name}(${arr(fn.params).map(String).join(", ")})) is the database's expression; left out, the field is optional`,
      );
    }
    return;
  }
  if (fn.type === "array") {
    // `String[] @default([])`, `Role[] @default([USER])`: a list default.
    f.default = arr(fn.args).map((a) => scalarDefault(f.itemsType ?? f.type, String(a)));
    return;
  }
  if (typeof value !== "string") {
    note("skipped", "default", `default ${JSON.stringify(value)} is not understood; left out`);
    return;
  }
  if (fieldType === "Json") {
    // `Json @default("{}")`: the string holds JSON; the default is the value it spells.
    let parsed: unknown;
    try {
      parsed = JSON.parse(unquote(value) ?? value) as unknown;
    } catch {
      parsed = undefined;
    }
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) f.default = parsed;
    else {
      // An object field holds no array or plain value; the field keeps Prisma's promise of a default by being optional.
      f.required = false;
      note(
        "skipped",
        "default",
        `default ${value} is not a JSON object, which the object field cannot hold; left out, the field is optional`,
      );
    }
    return;
  }
  if (f.enum) f.default = value;
  else f.default = scalarDefault(f.type, value);
}

function scalarDefault(type: ContractType, value: string): unknown {
  if (type === "boolean") return value === "true";
  if (type === "integer" || type === "number") return Number(value);
  return unquote(value) ?? value;
}

/**
 * A native type attribute (`@db.VarChar(255)`, `@db.Uuid`, `@db.Decimal(10, 2)`) on top of the
 * Prisma type: carried when the contract has the same fact (a length, a uuid, a text, a date),
 * otherwise a note saying what the field became.
 */
function applyNativeType(f: ImportField, native: string, args: unknown[], note: Note): void {
  const n = args.map((a) => Number(a)).filter((x) => Number.isFinite(x));
  const spelled = `@db.${native}${args.length > 0 ? `(${args.map(String).join(", ")})` : ""}`;
  f.sourceType = `${f.sourceType ?? ""} ${spelled}`.trim();
  switch (native) {
    case "VarChar":
    case "NVarChar":
      if (n[0] !== undefined) f.constraints = { ...f.constraints, maxLength: n[0] };
      return;
    case "Char":
    case "NChar":
      if (n[0] !== undefined) f.constraints = { ...f.constraints, maxLength: n[0] };
      note("changed", "type", `${spelled} is a fixed-length, blank-padded column; the contract keeps its maximum length only`);
      return;
    case "Uuid":
    case "UniqueIdentifier":
      if (f.type === "string") f.type = "uuid";
      return;
    case "Text":
    case "TinyText":
    case "MediumText":
    case "LongText":
    case "NText":
      if (f.type === "string") f.type = "text";
      return;
    case "Date":
      if (f.type === "datetime") f.type = "date";
      return;
    case "Timestamp":
    case "Timestamptz":
    case "DateTime":
    case "DateTime2":
    case "Integer":
    case "Int":
    case "BigInt":
    case "DoublePrecision":
    case "Double":
    case "Boolean":
    case "JsonB":
    case "Json":
    case "ByteA":
    case "Citext":
      if (native === "Citext") note("changed", "type", `${spelled} compares case-insensitively; the contract's string compares exactly`);
      return;
    case "SmallInt":
      f.constraints = { ...f.constraints, min: -32768, max: 32767 };
      return;
    case "TinyInt":
      f.constraints = { ...f.constraints, min: -128, max: 127 };
      return;
    case "UnsignedInt":
    case "UnsignedBigInt":
    case "UnsignedSmallInt":
    case "UnsignedTinyInt":
    case "UnsignedMediumInt":
      f.constraints = { ...f.constraints, min: 0 };
      return;
    case "Decimal":
    case "Numeric":
    case "Money":
    case "SmallMoney":
      note("changed", "type", `${spelled} becomes a number: the contract keeps no precision or scale`);
      return;
    case "Real":
    case "Float":
      note("changed", "type", `${spelled} becomes a number of double precision`);
      return;
    case "Time":
    case "Timetz":
      if (f.type === "datetime") f.type = "string";
      note("changed", "type", `${spelled} (a time of day) becomes a string: the contract has no time-of-day type`);
      return;
    default:
      note("changed", "type", `${spelled} has no contract equivalent; kept as ${f.type}`);
  }
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
