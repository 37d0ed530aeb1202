import type { DomainIR } from "../../compiler/index.js";
import { sqlHeader } from "../header.js";
import { oncePerIr } from "../once-per-ir.js";
import type { GeneratedFile, Generator } from "../types.js";
import { convertStatements } from "./convertor.js";
import { buildSchemaModel, type SchemaModel } from "./model.js";
import { createSchemaStatements, type Statement } from "./statements.js";
import { SCHEMA_SQL_PATH } from "./types.js";

export type { CheckModel, ColumnModel, ForeignKeyModel, IndexModel, SchemaModel, TableModel } from "./model.js";
export { buildSchemaModel } from "./model.js";
export type { Statement } from "./statements.js";
export {
  AUTH_USERS_TABLE,
  checkName,
  columnDefault,
  columnNotNull,
  EVENTS_TABLE,
  foreignKeyName,
  indexName,
  isStateField,
  MIGRATIONS_DIR,
  quoteIdent,
  quoteLiteral,
  SCHEMA_MIGRATIONS_TABLE,
  SCHEMA_SQL_PATH,
  SNAPSHOT_PATH,
  type SqlType,
  sequenceOf,
  sqlType,
  uniqueIndexName,
} from "./types.js";

/** The schema model of an IR, built once for both the postgres and the migrations targets (read-only). */
export const schemaModelOf: (ir: DomainIR) => SchemaModel = oncePerIr(buildSchemaModel);

/**
 * The statements that create the whole schema, and their SQL, once per IR: the body of schema.sql
 * and of a first migration are the same text (7 MB at 2,000 entities), so `--target all` renders it once.
 */
export const fullSchemaOf: (ir: DomainIR) => { statements: readonly Statement[]; sql: string } = oncePerIr((ir) => {
  const statements = createSchemaStatements(schemaModelOf(ir));
  return { statements, sql: convertStatements(statements) };
});

/**
 * The whole schema as idempotent SQL, applied by the app on every start after the migrations:
 * applying it twice, or over a database it already built, changes nothing and loses nothing.
 */
export function renderSchemaSql(ir: DomainIR): string {
  return `${sqlHeader()}-- Schema of domain ${ir.domain}: idempotent, re-applied on every start.\n\n${fullSchemaOf(ir).sql}`;
}

export function generatePostgres(ir: DomainIR): GeneratedFile[] {
  return [{ path: SCHEMA_SQL_PATH, content: renderSchemaSql(ir) }];
}

export const postgresGenerator: Generator = {
  target: "postgres",
  description: "backend/db/schema.sql: tables, constraints, indexes and sequences, idempotent",
  generate: ({ ir }) => generatePostgres(ir),
};
