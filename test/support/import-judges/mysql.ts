import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { ImportNote } from "../../../src/importers/model.js";
import { snakeCase } from "../../../src/importers/naming.js";
import { freshDatabase, psql } from "../postgres.js";
import { type Catalog, type Column, type Constraint, compareCatalogs, generatedCatalog, inputFiles, type JudgeResult } from "./sql.js";

/**
 * The independent judge of a MySQL import (issue 38): the input is applied to a real MariaDB
 * (127.0.0.1:3306, root; MARIADB_HOST/MARIADB_PORT override), its information_schema read, and
 * compared with the catalog of the generated schema.sql applied to PostgreSQL, by the SQL judge's
 * comparison. MariaDB reads the input, not the importer's parser.
 *
 * The MySQL types are named by their PostgreSQL counterparts before comparing (the documented
 * mapping, docs of `charter factory migrate --dialect mysql`): TINYINT(1) is boolean, DATETIME is
 * timestamp and TIMESTAMP timestamptz, the integer widths int2/int4/int8, DECIMAL numeric,
 * DOUBLE/FLOAT float8/float4, CHAR/VARCHAR bpchar/varchar with their length, the TEXT kinds text,
 * JSON (MariaDB: LONGTEXT checked by json_valid) jsonb, ENUM an enum, SET an array, BLOB/BINARY bytea.
 * Views are not judged (as in the PostgreSQL judge, which reads tables only).
 */
const HOST = process.env.MARIADB_HOST ?? "127.0.0.1";
const PORT = process.env.MARIADB_PORT ?? "3306";

function mariadb(sql: string, db?: string, extra: string[] = []): { stdout: string; stderr: string; status: number } {
  const r = spawnSync("mariadb", ["-h", HOST, "-P", PORT, "-u", "root", ...extra, ...(db ? [db] : [])], {
    input: sql,
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  if (r.error) throw r.error;
  return { stdout: r.stdout, stderr: r.stderr, status: r.status ?? 1 };
}

/**
 * Statements that would leave the scratch database, and data loads by file, are left out of the
 * input; names qualified by the database the input USEs (`sakila.film` in a view) lose the qualifier.
 */
function inputText(files: readonly string[]): string {
  return files
    .map((f) => {
      const text = readFileSync(f, "utf8");
      const own = [...text.matchAll(/^\s*USE\s+`?(\w+)`?/gim)].map((m) => m[1] as string);
      let kept = text
        .split("\n")
        .filter((l) => !/^\s*(USE\s|SOURCE\s|CREATE\s+(DATABASE|SCHEMA)\b|DROP\s+(DATABASE|SCHEMA)\b)/i.test(l))
        .join("\n");
      for (const db of new Set(own)) kept = kept.replace(new RegExp(`\`?\\b${db}\\b\`?\\.(?=[\`\\w])`, "g"), "");
      return kept;
    })
    .join("\n;\n");
}

const TYPES: Record<string, string> = {
  tinyint: "int2",
  smallint: "int2",
  mediumint: "int4",
  int: "int4",
  integer: "int4",
  bigint: "int8",
  decimal: "numeric",
  numeric: "numeric",
  float: "float4",
  double: "float8",
  real: "float8",
  varchar: "varchar",
  char: "bpchar",
  tinytext: "text",
  text: "text",
  mediumtext: "text",
  longtext: "text",
  datetime: "timestamp",
  timestamp: "timestamptz",
  date: "date",
  time: "time",
  year: "int2",
  json: "jsonb",
  enum: "enum",
  set: "array",
  bit: "bit",
  binary: "bytea",
  varbinary: "bytea",
  tinyblob: "bytea",
  blob: "bytea",
  mediumblob: "bytea",
  longblob: "bytea",
};

const DELETE_RULE: Record<string, string> = { CASCADE: "c", "SET NULL": "n", "SET DEFAULT": "d", RESTRICT: "r", "NO ACTION": "a" };

interface Row {
  [k: string]: string | number | null;
}

function rows(db: string, sql: string): Row[] {
  const r = mariadb(`SELECT coalesce(json_arrayagg(x.o), '[]') FROM (${sql}) x;`, db, ["-N", "-B", "-r"]);
  if (r.status !== 0) throw new Error(`MariaDB: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout.trim() || "[]") as Row[];
}

/** A MariaDB default as PostgreSQL would print it: NULL is none, the clock is now(), booleans are words. */
function pgDefault(d: string | null, type: string): string | null {
  if (d === null || d === "NULL") return null;
  if (/^current_timestamp(\(\d*\))?$/i.test(d)) return "now()";
  if (type === "bool" && /^[01]$/.test(d)) return d === "1" ? "true" : "false";
  return d;
}

/** The scratch database's tables, columns and constraints, in the SQL judge's Catalog shape. */
function readMariaCatalog(db: string): Catalog {
  const cols = rows(
    db,
    `SELECT json_object('table', TABLE_NAME, 'column', COLUMN_NAME, 'data', DATA_TYPE, 'ctype', COLUMN_TYPE,
       'length', CHARACTER_MAXIMUM_LENGTH, 'nullable', IS_NULLABLE, 'default', COLUMN_DEFAULT, 'extra', EXTRA) o
     FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN
       (SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE')
     ORDER BY TABLE_NAME, ORDINAL_POSITION`,
  );
  const checks = rows(
    db,
    `SELECT json_object('table', TABLE_NAME, 'name', CONSTRAINT_NAME, 'clause', CHECK_CLAUSE) o
     FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()`,
  );
  const jsonColumn = (table: unknown, column: unknown): boolean =>
    checks.some((c) => c.table === table && new RegExp(`^json_valid\\(\`${String(column)}\`\\)$`, "i").test(String(c.clause)));
  const columns: Column[] = cols.map((c) => {
    const data = String(c.data).toLowerCase();
    let type = TYPES[data] ?? data;
    if (/^tinyint\(1\)/i.test(String(c.ctype))) type = "bool";
    if (data === "longtext" && jsonColumn(c.table, c.column)) type = "jsonb";
    const extra = String(c.extra ?? "");
    const def = /auto_increment/i.test(extra) ? "nextval('sequence')" : pgDefault(c.default as string | null, type);
    return {
      table: String(c.table),
      column: String(c.column),
      type,
      length: type === "varchar" || type === "bpchar" ? Number(c.length) : null,
      nullable: c.nullable === "YES",
      default: def,
    };
  });
  const keys = rows(
    db,
    `SELECT json_object('table', k.TABLE_NAME, 'name', k.CONSTRAINT_NAME, 'type', t.CONSTRAINT_TYPE, 'column', k.COLUMN_NAME,
       'target', k.REFERENCED_TABLE_NAME, 'delete', r.DELETE_RULE) o
     FROM information_schema.KEY_COLUMN_USAGE k
     JOIN information_schema.TABLE_CONSTRAINTS t ON t.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND t.TABLE_NAME = k.TABLE_NAME AND t.CONSTRAINT_NAME = k.CONSTRAINT_NAME
     LEFT JOIN information_schema.REFERENTIAL_CONSTRAINTS r ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.TABLE_NAME = k.TABLE_NAME AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME
     WHERE k.TABLE_SCHEMA = DATABASE() ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`,
  );
  const byName = new Map<string, Constraint>();
  for (const k of keys) {
    const id = `${String(k.table)}\u0000${String(k.name)}`;
    const type = k.type === "PRIMARY KEY" ? "p" : k.type === "UNIQUE" ? "u" : k.type === "FOREIGN KEY" ? "f" : null;
    if (!type) continue;
    const c = byName.get(id) ?? {
      table: String(k.table),
      type,
      columns: [],
      target: k.target === null ? null : String(k.target),
      delete: k.delete === null ? null : (DELETE_RULE[String(k.delete)] ?? "a"),
      def: `${String(k.type)} ${String(k.name)}`,
    };
    c.columns.push(String(k.column));
    byName.set(id, c);
  }
  const constraints = [...byName.values()];
  for (const c of checks) {
    const clause = String(c.clause);
    if (/^json_valid\(`[^`]+`\)$/i.test(clause)) continue;
    const tableCols = columns.filter((x) => x.table === c.table).map((x) => x.column);
    const named = [...clause.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).filter((n) => tableCols.includes(n));
    constraints.push({
      table: String(c.table),
      type: "c",
      columns: [...new Set(named)],
      target: null,
      delete: null,
      def: `CHECK (${clause})`,
    });
  }
  // Unique keys are TABLE_CONSTRAINTS rows already; a unique index is the same fact in MySQL.
  return { columns, constraints, uniqueIndexes: [] };
}

export async function judge(args: { inputPath: string; domainDir: string; notes: ImportNote[] }): Promise<JudgeResult> {
  const tag = `judge_${snakeCase(basename(args.domainDir)).slice(0, 30)}`;
  const maria = `${tag}_my`;
  mariadb(`DROP DATABASE IF EXISTS \`${maria}\`; CREATE DATABASE \`${maria}\` CHARACTER SET utf8mb4;`);
  const outDb = freshDatabase(`${tag}_out`);
  try {
    // --force goes on past an error (a statement MariaDB refuses); the refusals are counted.
    const applied = mariadb(inputText(inputFiles(args.inputPath)), maria, ["--force"]);
    const refused = (applied.stderr.match(/^ERROR/gm) ?? []).length;
    const a = readMariaCatalog(maria);
    const { b, ir } = generatedCatalog(args.domainDir, outDb);
    return { ...compareCatalogs(a, b, ir, args.notes), refused };
  } finally {
    mariadb(`DROP DATABASE IF EXISTS \`${maria}\`;`);
    psql("postgres", `DROP DATABASE IF EXISTS ${outDb} WITH (FORCE);`);
  }
}
