import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { checkDomain } from "../../../src/compiler/compile-path.js";
import type { DomainIR } from "../../../src/compiler/ir.js";
import { renderSchemaSql } from "../../../src/generators/postgres/index.js";
import type { FactKind, ImportNote } from "../../../src/importers/model.js";
import { entityName, RESERVED_FIELD_NAMES, snakeCase } from "../../../src/importers/naming.js";
import { freshDatabase, psql } from "../postgres.js";

/**
 * The independent judge of a PostgreSQL import (issue 38): the input is applied to one real
 * database and the generated schema.sql to another, and the two catalogs are compared fact by
 * fact (tables, columns, type family, length, nullability, default, primary key, unique, foreign
 * keys with their delete rule, checks). It does not share the importer's parser: PostgreSQL reads
 * the input. A difference no note names (by subject and fact) is silent.
 *
 * Not judged: the finer native type within a family (int2 against int8, timestamp against
 * timestamptz), and tables PostgreSQL itself refused while applying the input (counted in `refused`).
 */

export interface JudgeResult {
  compared: number;
  silent: { subject: string; fact: FactKind; detail: string }[];
  /** Statements of the input PostgreSQL refused (the judge compares what it built). */
  refused?: number;
}

export interface Column {
  table: string;
  column: string;
  type: string;
  length: number | null;
  nullable: boolean;
  default: string | null;
}

export interface Constraint {
  table: string;
  type: "p" | "u" | "f" | "c";
  columns: string[];
  target: string | null;
  delete: string | null;
  def: string;
}

export interface Catalog {
  columns: Column[];
  constraints: Constraint[];
  uniqueIndexes: { table: string; columns: string[] }[];
}

const CATALOG_SQL = `SELECT json_build_object(
 'columns', (SELECT coalesce(json_agg(json_build_object('table', c.relname, 'column', a.attname,
    'type', CASE WHEN t.typtype = 'e' THEN 'enum' WHEN t.typcategory = 'A' THEN 'array' ELSE coalesce(bt.typname, t.typname) END,
    'length', CASE WHEN coalesce(bt.typname, t.typname) IN ('varchar','bpchar') AND coalesce(NULLIF(a.atttypmod, -1), NULLIF(t.typtypmod, -1)) > 4
      THEN coalesce(NULLIF(a.atttypmod, -1), NULLIF(t.typtypmod, -1)) - 4 END,
    'nullable', NOT a.attnotnull AND NOT t.typnotnull,
    'default', pg_get_expr(d.adbin, d.adrelid)) ORDER BY c.relname, a.attnum), '[]')
   FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   JOIN pg_type t ON t.oid = a.atttypid LEFT JOIN pg_type bt ON t.typtype = 'd' AND bt.oid = t.typbasetype
   LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
     AND NOT c.relispartition AND a.attnum > 0 AND NOT a.attisdropped),
 'constraints', (SELECT coalesce(json_agg(json_build_object('table', c.relname, 'type', k.contype,
    'columns', (SELECT json_agg(a.attname ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = k.conrelid AND a.attnum = ANY(k.conkey)),
    'target', ft.relname, 'delete', CASE WHEN k.contype = 'f' THEN k.confdeltype END, 'def', pg_get_constraintdef(k.oid))), '[]')
   FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   LEFT JOIN pg_class ft ON ft.oid = k.confrelid
   WHERE k.contype IN ('p','u','f','c') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND NOT c.relispartition),
 'uniqueIndexes', (SELECT coalesce(json_agg(json_build_object('table', c.relname,
    'columns', (SELECT json_agg(a.attname) FROM pg_attribute a WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)))), '[]')
   FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE i.indisunique AND NOT i.indisprimary AND i.indpred IS NULL AND i.indexprs IS NULL
     AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND NOT c.relispartition)
)`;

export function readCatalog(db: string): Catalog {
  const out = psql(db, `${CATALOG_SQL};`, ["-A", "-t"]);
  const c = JSON.parse(out.trim()) as Catalog;
  for (const k of c.constraints) k.columns ??= [];
  for (const u of c.uniqueIndexes) u.columns ??= [];
  return c;
}

/** The files of the input in the order the importer reads them (a file, or migrations in numeric order). */
export function inputFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  const out: { key: string; file: string }[] = [];
  for (const e of readdirSync(path, { withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith(".sql")) out.push({ key: e.name, file: join(path, e.name) });
    else if (e.isDirectory() && existsSync(join(path, e.name, "migration.sql")))
      out.push({ key: e.name, file: join(path, e.name, "migration.sql") });
  }
  return out.sort((a, b) => a.key.localeCompare(b.key, "en", { numeric: true })).map((x) => x.file);
}

/**
 * The input as psql runs it, minus what would leave the fresh database: meta-commands (`\c db`)
 * and CREATE/DROP DATABASE. Errors do not stop it (a dump's GRANT to a missing role); they are counted.
 */
function applyInput(db: string, files: readonly string[]): number {
  let refused = 0;
  for (const f of files) {
    const text = readFileSync(f, "utf8")
      .split("\n")
      .filter((l) => !/^\s*\\/.test(l))
      .join("\n")
      .replace(/^[ \t]*(CREATE|DROP)[ \t]+DATABASE\b[^;\n]*;/gim, "");
    try {
      psql(db, text, ["-v", "ON_ERROR_STOP=0"]);
    } catch (e) {
      refused += (String((e as { stderr?: string }).stderr ?? "").match(/ERROR:/g) ?? []).length;
    }
  }
  return refused;
}

const FAMILY: Record<string, string> = {
  int2: "integer",
  int4: "integer",
  int8: "integer",
  numeric: "number",
  float4: "number",
  float8: "number",
  money: "number",
  varchar: "text",
  bpchar: "text",
  text: "text",
  citext: "text",
  bool: "boolean",
  timestamp: "datetime",
  timestamptz: "datetime",
  date: "date",
  uuid: "uuid",
  json: "json",
  jsonb: "json",
};

function family(type: string): string {
  return FAMILY[type] ?? type;
}

/** A default as text that compares across spellings: no casts, one word for "the clock". */
export function normalDefault(d: string | null): string | null {
  if (d === null) return null;
  const s = d
    .replace(/::("[^"]+"|[a-z_ ]+)(\(\d+(,\d+)?\))?(\[\])?/gi, "")
    .replace(/^\((.*)\)$/, "$1")
    .trim();
  if (/^('now'|now\(\)|CURRENT_TIMESTAMP|CURRENT_DATE|statement_timestamp\(\)|transaction_timestamp\(\)|LOCALTIMESTAMP)$/i.test(s))
    return "now";
  if (/^nextval\(/i.test(s)) return "sequence";
  if (/^(gen_random_uuid|uuid_generate_v4)\(\)$/i.test(s)) return "uuid";
  // A number reads the same however it is padded (MySQL prints DECIMAL(10,2) 0 as 0.00).
  return s.replace(/^'?(-?\d+(\.\d+)?)'?$/, (_m, n: string) => String(Number(n)));
}

export async function judge(args: { inputPath: string; domainDir: string; notes: ImportNote[] }): Promise<JudgeResult> {
  const tag = `judge_${snakeCase(basename(args.domainDir)).slice(0, 30)}`;
  const inputDb = freshDatabase(`${tag}_in`);
  const outDb = freshDatabase(`${tag}_out`);
  const refused = applyInput(inputDb, inputFiles(args.inputPath));
  const a = readCatalog(inputDb);
  const { b, ir } = generatedCatalog(args.domainDir, outDb);
  const result = compareCatalogs(a, b, ir, args.notes);
  for (const db of [inputDb, outDb]) psql("postgres", `DROP DATABASE IF EXISTS ${db} WITH (FORCE);`);
  return { ...result, refused };
}

/** The generated schema.sql of the domain applied to `db` (fresh), and its catalog. */
export function generatedCatalog(domainDir: string, db: string): { b: Catalog; ir: DomainIR } {
  const { ir, findings } = checkDomain(domainDir);
  if (!ir) throw new Error(`the imported domain does not compile: ${findings.map((f) => f.message).join("; ")}`);
  psql(db, renderSchemaSql(ir));
  return { b: readCatalog(db), ir };
}

/**
 * The input's catalog `a` against the generated one `b`, fact by fact; a difference no note
 * names is silent. Types compare by family (FAMILY: PostgreSQL type names).
 */
export function compareCatalogs(a: Catalog, b: Catalog, ir: DomainIR, notes: readonly ImportNote[]): Omit<JudgeResult, "refused"> {
  const args = { notes };
  const entities = new Map(ir.entities.map((e) => [e.name, e]));
  const silent: JudgeResult["silent"] = [];
  let compared = 0;
  const covered = (fact: FactKind, subjects: string[]): boolean => args.notes.some((n) => n.fact === fact && subjects.includes(n.subject));
  const judgeFact = (fact: FactKind, subjects: string[], same: boolean, detail: string): void => {
    compared++;
    if (!same && !covered(fact, subjects)) silent.push({ subject: subjects[0] as string, fact, detail });
  };

  const inputTables = [...new Set(a.columns.map((c) => c.table))];
  for (const table of inputTables) {
    const entity = entityName(table);
    const e = entities.get(entity);
    const tableSubjects = [table, entity];
    judgeFact("table", tableSubjects, e !== undefined, "no table generated for it");
    if (!e) continue;
    const columnOf = (c: string): string => {
      const s = snakeCase(c);
      return RESERVED_FIELD_NAMES.has(s) && !/^(status|state)$/i.test(c) ? `${s}_value` : s;
    };
    const outCols = new Map(b.columns.filter((c) => c.table === e.table).map((c) => [c.column, c]));
    const inCons = a.constraints.filter((k) => k.table === table);
    const outCons = b.constraints.filter((k) => k.table === e.table);
    const pk = inCons.find((k) => k.type === "p")?.columns ?? [];
    const pkMapped = pk.map(columnOf);
    judgeFact(
      "primary_key",
      [...tableSubjects, `${entity}.${pkMapped.join(", ")}`],
      pk.length === 0 || (pkMapped.length === 1 && pkMapped[0] === "id"),
      `key (${pk.join(", ")}) is not the generated table's id`,
    );
    const fkCols = new Set(inCons.filter((k) => k.type === "f" && k.columns.length === 1).map((k) => k.columns[0]));
    for (const c of a.columns.filter((x) => x.table === table)) {
      let name = columnOf(c.column);
      // An `id` that is not the key is kept as source_id; the key `id` is the generated id.
      if (name === "id" && !(pk.length === 1 && pk[0] === c.column)) name = "source_id";
      const subjects = [`${table}.${c.column}`, `${entity}.${name}`, `${entity}.${c.column}`, table, entity];
      const o = outCols.get(name) ?? (name === "state" ? outCols.get("state_value") : undefined);
      judgeFact("column", subjects, o !== undefined, "no column generated for it");
      if (!o) continue;
      const isKeyId = name === "id";
      const inFamily = family(c.type);
      const outFamily = family(o.type);
      // An enum becomes text with a CHECK of its values (the enum fact judges those).
      // Arrays are stored as jsonb by the generated schema: the list survives, in another column type.
      const sameType =
        inFamily === outFamily || (inFamily === "enum" && outFamily === "text") || (inFamily === "array" && o.type === "jsonb");
      judgeFact("type", subjects, sameType, `${c.type} became ${o.type}`);
      // Length is a fact of a text column; a key or reference that became a uuid is judged by its type.
      if (c.length !== null && outFamily === "text") {
        const check = outCons.find((k) => k.type === "c" && new RegExp(`char_length\\(${name}\\) <= (\\d+)`).test(k.def.replace(/"/g, "")));
        const outLength = o.length ?? Number(/<= (\d+)/.exec(check?.def ?? "")?.[1] ?? Number.NaN);
        judgeFact(
          "length",
          subjects,
          outLength === c.length,
          `length ${c.length} became ${Number.isNaN(outLength) ? "unbounded" : outLength}`,
        );
      }
      if (!isKeyId)
        judgeFact(
          "nullability",
          subjects,
          c.nullable === o.nullable,
          `${c.nullable ? "NULL" : "NOT NULL"} became ${o.nullable ? "NULL" : "NOT NULL"}`,
        );
      if (!isKeyId && !fkCols.has(c.column) && (c.default !== null || o.default !== null)) {
        const x = normalDefault(c.default);
        const y = normalDefault(o.default);
        judgeFact("default", subjects, x === y, `default ${c.default ?? "none"} became ${o.default ?? "none"}`);
      }
      const unique =
        inCons.some((k) => k.type === "u" && k.columns.length === 1 && k.columns[0] === c.column) ||
        a.uniqueIndexes.some((u) => u.table === table && u.columns.length === 1 && u.columns[0] === c.column);
      if (unique && !isKeyId) {
        const outUnique =
          outCons.some((k) => k.type === "u" && k.columns.length === 1 && k.columns[0] === name) ||
          b.uniqueIndexes.some((u) => u.table === e.table && u.columns.length === 1 && u.columns[0] === name);
        judgeFact("unique", subjects, outUnique, "unique was not carried");
      }
    }
    for (const fk of inCons.filter((k) => k.type === "f")) {
      const names = fk.columns.map(columnOf);
      const subjects = [
        `${table}.${fk.columns.join(", ")}`,
        `${entity}.${names.join(", ")}`,
        `${entity}.(${names.join(", ")})`,
        table,
        entity,
      ];
      const target = fk.target ? entities.get(entityName(fk.target))?.table : undefined;
      const o = outCons.find((k) => k.type === "f" && k.columns.join() === names.join() && k.target === target);
      judgeFact("reference", subjects, o !== undefined, `foreign key to ${fk.target} not generated`);
      if (o) judgeFact("on_delete", subjects, deleteRule(fk.delete) === deleteRule(o.delete), `ON DELETE ${fk.delete} became ${o.delete}`);
    }
    for (const ck of inCons.filter((k) => k.type === "c")) {
      const names = ck.columns.map(columnOf);
      // A CHECK is carried when the generated table checks the same columns (as enum, bounds or length).
      const carried =
        names.length > 0 &&
        names.every((n) => outCons.some((k) => k.type === "c" && k.columns.includes(n)) || outCols.get(n)?.type === "bool");
      judgeFact(
        "check",
        [...names.map((n) => `${entity}.${n}`), ...ck.columns.map((c) => `${table}.${c}`), `CHECK on ${table}`, table, entity],
        carried,
        `${ck.def} not generated`,
      );
    }
  }
  return { compared, silent };
}

/** NO ACTION and RESTRICT both refuse the delete; the letters are pg_constraint's confdeltype. */
function deleteRule(letter: string | null): string {
  return letter === "c" ? "cascade" : letter === "n" ? "set_null" : letter === "d" ? "set_default" : "restrict";
}
