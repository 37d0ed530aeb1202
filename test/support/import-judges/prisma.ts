import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { ImportNote } from "../../../src/importers/model.js";
import { entityName, snakeCase } from "../../../src/importers/naming.js";
import { type ContractEntity, type ContractField, implicitColumn, type JudgeResult, readEntities, sameValue, Tally } from "./code-facts.js";

/**
 * The independent judge of a Prisma import: Prisma's own schema engine (`get_dmmf` of
 * @prisma/prisma-schema-wasm, the parser and validator `prisma generate` runs) reads the input,
 * and every fact of every model is compared with the contracts the import wrote. A difference no
 * note names is silent. Nothing of the importer (prisma-ast, its mapping) is used to read the input.
 */

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "enum" | "object" | "unsupported";
  isList: boolean;
  isRequired: boolean;
  isUnique: boolean;
  isId: boolean;
  isUpdatedAt: boolean;
  hasDefaultValue: boolean;
  type: string;
  nativeType?: [string, string[]] | null;
  default?: unknown;
  relationFromFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  primaryKey: { fields: string[] } | null;
  uniqueFields: string[][];
}
interface Dmmf {
  datamodel: { models: DmmfModel[]; enums: { name: string; values: { name: string; dbName: string | null }[] }[] };
}

const require = createRequire(import.meta.url);

/** The schema as Prisma reads it: one file or a folder of `.prisma` files (a multi-file schema). */
export function prismaDmmf(inputPath: string): Dmmf {
  const files = statSync(inputPath).isDirectory()
    ? (readdirSync(inputPath, { recursive: true }) as string[])
        .filter((f) => f.endsWith(".prisma"))
        .sort()
        .map((f) => join(inputPath, f))
    : [inputPath];
  const wasm = require("@prisma/prisma-schema-wasm") as { get_dmmf: (params: string) => string };
  // Prisma 7 moved the connection URL to prisma.config.ts, and schemas written for it have none;
  // this engine (Prisma 6) wants one. The URL is no fact of the data model: one is supplied.
  const prismaSchema = files.map((f) => [
    f,
    readFileSync(f, "utf8").replace(/(datasource\s+\w+\s*\{)([^}]*)\}/g, (all, open: string, body: string) =>
      /^\s*url\s*=/m.test(body) ? all : `${open}\n  url = env("DATABASE_URL")${body}}`,
    ),
  ]);
  return JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema }))) as Dmmf;
}

/** The contract type that says exactly what a Prisma type says; null when none does (a note must say what it became). */
function faithfulType(f: DmmfField): string | null {
  const native = f.nativeType?.[0];
  switch (f.type) {
    case "String":
      if (native === undefined || native === "VarChar" || native === "NVarChar") return "string";
      if (native === "Text" || native === "LongText" || native === "MediumText" || native === "TinyText") return "text";
      if (native === "Uuid" || native === "UniqueIdentifier") return "uuid";
      return null;
    case "Int":
    case "BigInt":
      return "integer";
    case "Float":
      return native === undefined || native === "DoublePrecision" || native === "Double" ? "number" : null;
    case "Boolean":
      return "boolean";
    case "DateTime":
      if (native === "Date") return "date";
      return native === undefined || native === "Timestamp" || native === "Timestamptz" || native === "DateTime" ? "datetime" : null;
    default:
      // Decimal (exactness), Json (any JSON value), Bytes: no contract type says the same.
      return null;
  }
}

function expectedDefault(f: DmmfField): { value?: unknown; computed?: string } | null {
  const d = f.default;
  if (d !== null && typeof d === "object" && !Array.isArray(d)) {
    const fn = (d as { name: string }).name;
    // `@default(now()) @updatedAt`: stamped on creation and on each update, the contract's now_on_update.
    if (fn === "now") return { computed: f.isUpdatedAt ? "now_on_update" : "now" };
    if (fn === "uuid") return { computed: "uuid" };
    return null; // autoincrement, cuid, dbgenerated, sequence: the database's or Prisma's own, a note must say
  }
  if (f.type === "Json" && typeof d === "string") {
    try {
      return { value: JSON.parse(d) as unknown };
    } catch {
      return null;
    }
  }
  // Prisma's DMMF spells Decimal and BigInt defaults as strings ("0"): the value is the number.
  if ((f.type === "Decimal" || f.type === "BigInt") && typeof d === "string" && Number.isFinite(Number(d))) return { value: Number(d) };
  return { value: d };
}

export async function judge(args: { inputPath: string; domainDir: string; notes: ImportNote[] }): Promise<JudgeResult> {
  const dmmf = prismaDmmf(args.inputPath);
  const entities = readEntities(args.domainDir);
  const tally = new Tally(args.notes);
  const enums = new Map(dmmf.datamodel.enums.map((e) => [e.name, e.values.map((v) => v.name)]));
  const entityOf = (m: DmmfModel): ContractEntity | undefined =>
    entities.get(entityName(m.name)) ?? [...entities.values()].find((e) => e.table !== undefined && e.table === m.dbName);
  for (const m of dmmf.datamodel.models) {
    const entity = entityOf(m);
    tally.check([m.name], "table", entity !== undefined, () => `model ${m.name} has no entity`);
    if (!entity) continue;
    // `@@id([a, b])`: the contracts key every entity by its own id; `@@id([a])` is a key on one field.
    const keyed = m.primaryKey?.fields ?? [];
    const keySubjects =
      keyed.length === 1 ? [`${m.name}.${keyed[0]}`, `${entity.name}.${snakeCase(keyed[0] as string)}`] : [m.name, entity.name];
    if (keyed.length > 0) tally.check(keySubjects, "primary_key", false, () => `primary key (${keyed.join(", ")})`);
    for (const u of m.uniqueFields.filter((u) => u.length > 1))
      tally.check([m.name, entity.name], "unique", false, () => `composite unique (${u.join(", ")})`);
    const columnOf = new Map(m.fields.map((f) => [f.name, snakeCase(f.dbName ?? f.name)]));
    const fieldOf = (f: DmmfField): [string, ContractField | undefined] => {
      const column = columnOf.get(f.name) as string;
      const name = column === "id" && !f.isId ? "source_id" : column;
      return [name, entity.fields[name] ?? entity.fields[`${name}_value`]];
    };
    const foreign = new Set(m.fields.flatMap((f) => f.relationFromFields ?? []));
    for (const f of m.fields) {
      const subjects = [`${m.name}.${f.name}`, `${entity.name}.${columnOf.get(f.name)}`];
      if (f.kind === "object") {
        const from = f.relationFromFields ?? [];
        if (from.length === 0) continue; // the list side of a relation: no column
        if (from.length > 1) {
          tally.check(subjects, "reference", false, () => `composite foreign key (${from.join(", ")})`);
          continue;
        }
        const scalar = m.fields.find((x) => x.name === from[0]) as DmmfField;
        const [name, field] = fieldOf(scalar);
        const refSubjects = [`${m.name}.${scalar.name}`, `${entity.name}.${name}`];
        const target = `entity/${entity.domain}/${entityName(f.type)}`;
        tally.check(refSubjects, "reference", field?.references?.entity === target, () => `${name} should reference ${target}`);
        if (field?.references) {
          const required = field.required === true;
          const source = f.relationOnDelete ?? (scalar.isRequired ? "Restrict" : "SetNull");
          const expected = { Cascade: "cascade", SetNull: "set_null", Restrict: "restrict", NoAction: "restrict" }[source];
          const actual = field.references.on_delete ?? (required ? "restrict" : "set_null");
          tally.check(refSubjects, "on_delete", actual === expected, () => `onDelete: ${source} became ${actual}`);
        }
        continue;
      }
      if (f.kind === "unsupported") {
        tally.check(subjects, "type", false, () => `Unsupported(${f.type}) field`);
        continue;
      }
      const [name, field] = fieldOf(f);
      const column = columnOf.get(f.name) as string;
      const statusEnum = entity.workflow?.field === column || entity.workflow?.field === f.name;
      const implicit = (f.isId && column === "id") || implicitColumn(entity, column) || statusEnum;
      tally.check(subjects, "column", field !== undefined || implicit, () => `field ${name} is missing`);
      if (f.isId && column !== "id")
        tally.check(subjects, "primary_key", false, () => `@id on ${f.name}: the contract keys by an implicit id`);
      if (f.isId && column === "id")
        tally.check(
          subjects,
          "type",
          f.type === "String" && f.nativeType?.[0] === "Uuid",
          () => `${f.type} key became the implicit uuid id`,
        );
      if (statusEnum && entity.workflow) {
        const values = enums.get(f.type) ?? [];
        tally.check(
          subjects,
          "enum",
          sameValue(
            values.map((v) => v.toLowerCase()),
            entity.workflow.states,
          ),
          () => `enum ${values.join(", ")} became states ${entity.workflow?.states.join(", ")}`,
        );
        if (f.hasDefaultValue)
          tally.check(
            subjects,
            "default",
            String(f.default).toLowerCase() === entity.workflow.initial,
            () => `default ${String(f.default)} became initial state ${entity.workflow?.initial}`,
          );
        continue;
      }
      if (!field) continue;
      if (f.isUnique) tally.check(subjects, "unique", false, () => "unique is not in the contract");
      if (!foreign.has(f.name)) {
        const itemType = f.kind === "enum" ? "string" : faithfulType(f);
        const type = f.isList ? "array" : itemType;
        tally.check(
          subjects,
          "type",
          type !== null && field.type === type && (!f.isList || field.items_type === itemType),
          () => `${f.type}${f.nativeType ? ` @db.${f.nativeType[0]}` : ""}${f.isList ? "[]" : ""} became ${field.type}`,
        );
        if (f.kind === "enum") {
          const values = enums.get(f.type) ?? [];
          tally.check(
            subjects,
            "enum",
            !f.isList && sameValue(field.enum, values),
            () => `enum ${values.join(", ")} became ${JSON.stringify(field.enum)}`,
          );
        }
        const length = ["VarChar", "Char", "NVarChar", "NChar"].includes(f.nativeType?.[0] ?? "")
          ? Number(f.nativeType?.[1][0])
          : undefined;
        if (length !== undefined)
          tally.check(
            subjects,
            "length",
            field.constraints?.maxLength === length,
            () => `length ${length} became ${field.constraints?.maxLength}`,
          );
      }
      if (!f.isId) {
        const required = f.isRequired && !f.hasDefaultValue && !f.isList && !f.isUpdatedAt;
        tally.check(
          subjects,
          "nullability",
          (field.required === true) === required,
          () => `required ${required} became ${field.required === true}`,
        );
      }
      if (f.hasDefaultValue) {
        const want = expectedDefault(f);
        const same =
          want !== null && (want.computed !== undefined ? field.computed === want.computed : sameValue(field.default, want.value));
        tally.check(
          subjects,
          "default",
          same,
          () => `default ${JSON.stringify(f.default)} became ${JSON.stringify(field.default ?? field.computed)}`,
        );
      }
    }
  }
  return tally.result;
}
