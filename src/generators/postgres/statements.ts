import type { CheckModel, ColumnModel, ForeignKeyModel, IndexModel, SchemaModel } from "./model.js";
import { isEntityTable } from "./model.js";
import { SOFT_DELETE_COLUMN, type SqlType } from "./types.js";

/**
 * One schema change, as data (drizzle-kit's statements). The migrations diff produces a list of
 * these, the full schema is a list of these too, and the convertor turns each into SQL. Table names
 * are the names at the moment the statement runs (after earlier renames in the same file).
 */
export type Statement =
  | { type: "create_sequence"; name: string }
  | { type: "drop_sequence"; name: string }
  /** Columns and primary key only; checks, foreign keys and indexes follow as their own statements. */
  | { type: "create_table"; table: string; key: string; columns: ColumnModel[] }
  /**
   * schema.sql's safety net: adds, as nullable, any column an older database lacks, so re-applying a
   * newer schema.sql never fails on a missing column. Migrations are the real upgrade path.
   */
  | { type: "ensure_columns"; table: string; columns: ColumnModel[] }
  | { type: "drop_table"; table: string }
  | { type: "rename_table"; from: string; to: string }
  | { type: "add_column"; table: string; column: ColumnModel }
  | { type: "drop_column"; table: string; column: string }
  | { type: "rename_column"; table: string; from: string; to: string }
  | { type: "alter_column_type"; table: string; column: string; from: SqlType; to: SqlType }
  /** `fill`: the value given to rows that hold NULL first (the column's default), or null for none. */
  | { type: "set_not_null"; table: string; column: string; fill: string | null }
  | { type: "drop_not_null"; table: string; column: string }
  | { type: "set_default"; table: string; column: string; default: string }
  | { type: "drop_default"; table: string; column: string }
  /**
   * `mayRejectRows`: the column already holds rows that were never checked against this (stricter
   * or new) rule, so adding it can fail; the migration flags it for review.
   */
  | { type: "add_check"; table: string; check: CheckModel; columnType: SqlType; mayRejectRows: boolean }
  | { type: "drop_check"; table: string; name: string }
  | { type: "add_foreign_key"; table: string; foreignKey: ForeignKeyModel }
  | { type: "drop_foreign_key"; table: string; name: string }
  | { type: "rename_constraint"; table: string; from: string; to: string }
  | { type: "create_index"; table: string; index: IndexModel }
  | { type: "drop_index"; name: string }
  | { type: "rename_index"; from: string; to: string }
  /**
   * The functions that keep row_counts exact and the row_versions sequence current; replaced
   * wherever they run, so always current.
   */
  | { type: "create_row_counting" }
  /**
   * `counted`: puts the counting triggers on an entity table and counts its rows, unless they are in
   * place already (cheap on every start); `alive`: soft-deleted rows do not count. Otherwise removes
   * any counting an earlier generation installed and puts the version triggers on instead (the app
   * then keeps a counted total until the table changes). Either way the other kind goes.
   */
  | { type: "count_rows"; table: string; counted: boolean; alive: boolean }
  /** Drops the counters of tables that no longer exist (dropped, or renamed by a migration). */
  | { type: "forget_row_counts" };

export type StatementType = Statement["type"];

/**
 * The statements that build the whole schema from nothing, every one idempotent: schema.sql and the
 * first migration. Tables first, then constraints, because tables may reference each other.
 */
export function createSchemaStatements(model: SchemaModel): Statement[] {
  const out: Statement[] = [];
  for (const name of model.sequences) out.push({ type: "create_sequence", name });
  for (const t of model.tables) {
    out.push({ type: "create_table", table: t.name, key: t.key, columns: t.columns });
    const extra = t.columns.filter((c) => !c.primaryKey);
    if (extra.length > 0) out.push({ type: "ensure_columns", table: t.name, columns: extra });
  }
  for (const t of model.tables) {
    const types = new Map(t.columns.map((c) => [c.name, c.type]));
    for (const check of t.checks) {
      out.push({ type: "add_check", table: t.name, check, columnType: types.get(check.column) ?? "TEXT", mayRejectRows: false });
    }
  }
  for (const t of model.tables) {
    for (const fk of t.foreignKeys) out.push({ type: "add_foreign_key", table: t.name, foreignKey: fk });
  }
  for (const t of model.tables) {
    for (const index of t.indexes) out.push({ type: "create_index", table: t.name, index });
  }
  const entityTables = model.tables.filter(isEntityTable);
  if (entityTables.length > 0) {
    out.push({ type: "create_row_counting" });
    for (const t of entityTables) {
      const alive = t.columns.some((c) => c.name === SOFT_DELETE_COLUMN);
      out.push({ type: "count_rows", table: t.name, counted: t.rowCounter === true, alive });
    }
    out.push({ type: "forget_row_counts" });
  }
  return out;
}
