import type { DomainIR } from "../../compiler/index.js";
import { sqlHeader } from "../header.js";
import type { GeneratedFile, Generator } from "../types.js";
import { convertStatements } from "./convertor.js";
import { buildSchemaModel } from "./model.js";
import { createSchemaStatements } from "./statements.js";
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

/**
 * The whole schema as idempotent SQL, applied by the app on every start after the migrations:
 * applying it twice, or over a database it already built, changes nothing and loses nothing.
 */
export function renderSchemaSql(ir: DomainIR): string {
  const body = convertStatements(createSchemaStatements(buildSchemaModel(ir)));
  return `${sqlHeader()}-- Schema of domain ${ir.domain}: idempotent, re-applied on every start.\n\n${body}`;
}

export function generatePostgres(ir: DomainIR): GeneratedFile[] {
  return [{ path: SCHEMA_SQL_PATH, content: renderSchemaSql(ir) }];
}

export const postgresGenerator: Generator = {
  target: "postgres",
  description: "backend/db/schema.sql: tables, constraints, indexes and sequences, idempotent",
  generate: ({ ir }) => generatePostgres(ir),
};
