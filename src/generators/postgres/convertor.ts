import type { GenerationWarning } from "../types.js";
import type { CheckModel, ColumnModel } from "./model.js";
import type { Statement } from "./statements.js";
import {
  isWidening,
  quoteIdent as q,
  quoteLiteral,
  ROW_COUNT_SHARDS,
  ROW_COUNTS_TABLE,
  ROW_VERSIONS_SEQUENCE,
  SOFT_DELETE_COLUMN,
  type SqlType,
  sqlLiteral,
} from "./types.js";

/**
 * Statements to SQL, one convertor per statement type (drizzle-kit's convertor.ts). Everything that
 * creates is idempotent (IF NOT EXISTS, or a DO block that looks the constraint up in pg_constraint)
 * so the same text serves schema.sql, which is re-applied on every start, and the first migration.
 * No BEGIN/COMMIT: the app's migration runner wraps each file in a transaction.
 */

/** The comment a warned statement carries in the SQL, for whoever reads the file (the CLI reads the data). */
export const WARNING_PREFIX = "-- charter: WARNING ";

/** A dollar-quote tag that a contract value (an enum, a pattern) will not contain by accident. */
const DO_TAG = "$charter$";

export function convertStatements(statements: readonly Statement[]): string {
  const blocks: string[] = [];
  let previous: Statement | null = null;
  for (const st of statements) {
    const warning = warningOf(st);
    const sql = (warning === null ? "" : `${WARNING_PREFIX}${warning.kind}: ${warning.message}\n`) + convertStatement(st);
    // Runs of one-line statements of a kind stay together; anything else gets a blank line.
    const sameRun = previous !== null && previous.type === st.type && warning === null && !sql.includes("\n");
    if (sameRun && blocks.length > 0) blocks[blocks.length - 1] += `\n${sql}`;
    else blocks.push(sql);
    previous = warning === null && !sql.includes("\n") ? st : null;
  }
  return blocks.length === 0 ? "" : `${blocks.join("\n\n")}\n`;
}

export function convertStatement(st: Statement): string {
  switch (st.type) {
    case "create_sequence":
      return `CREATE SEQUENCE IF NOT EXISTS ${q(st.name)};`;
    case "drop_sequence":
      return `DROP SEQUENCE IF EXISTS ${q(st.name)};`;
    case "create_table":
      return `CREATE TABLE IF NOT EXISTS ${q(st.table)} (\n${st.columns.map((c) => `  ${columnDefinition(c)}`).join(",\n")}\n);`;
    case "ensure_columns":
      return `ALTER TABLE ${q(st.table)}\n${st.columns
        .map((c) => `  ADD COLUMN IF NOT EXISTS ${q(c.name)} ${c.type}${c.default === null ? "" : ` DEFAULT ${c.default}`}`)
        .join(",\n")};`;
    case "drop_table":
      return `DROP TABLE IF EXISTS ${q(st.table)};`;
    case "rename_table":
      return `ALTER TABLE ${q(st.from)} RENAME TO ${q(st.to)};`;
    case "add_column":
      return addColumn(st.table, st.column);
    case "drop_column": {
      const drop = `ALTER TABLE ${q(st.table)} DROP COLUMN IF EXISTS ${q(st.column)};`;
      // The soft-delete triggers (counting, versions) depend on the column: they go first
      // (schema.sql then counts the table again, all rows alive).
      if (st.column !== SOFT_DELETE_COLUMN) return drop;
      const triggers = ["row_counts_flipped", "row_versions_flipped"];
      return `${triggers.map((t) => `DROP TRIGGER IF EXISTS ${q(t)} ON ${q(st.table)};`).join("\n")}\n${drop}`;
    }
    case "rename_column":
      return `ALTER TABLE ${q(st.table)} RENAME COLUMN ${q(st.from)} TO ${q(st.to)};`;
    case "alter_column_type":
      return `ALTER TABLE ${q(st.table)} ALTER COLUMN ${q(st.column)} SET DATA TYPE ${st.to} USING ${castExpression(q(st.column), st.from, st.to)};`;
    case "set_not_null":
      if (st.fill !== null) {
        return `UPDATE ${q(st.table)} SET ${q(st.column)} = ${st.fill} WHERE ${q(st.column)} IS NULL;\nALTER TABLE ${q(st.table)} ALTER COLUMN ${q(st.column)} SET NOT NULL;`;
      }
      return notNullWhenNoNulls(st.table, st.column);
    case "drop_not_null":
      return `ALTER TABLE ${q(st.table)} ALTER COLUMN ${q(st.column)} DROP NOT NULL;`;
    case "set_default":
      return `ALTER TABLE ${q(st.table)} ALTER COLUMN ${q(st.column)} SET DEFAULT ${st.default};`;
    case "drop_default":
      return `ALTER TABLE ${q(st.table)} ALTER COLUMN ${q(st.column)} DROP DEFAULT;`;
    case "add_check":
      return addConstraint(st.table, st.check.name, `CHECK (${checkExpression(st.check, st.columnType)})`);
    case "drop_check":
    case "drop_foreign_key":
      return `ALTER TABLE ${q(st.table)} DROP CONSTRAINT IF EXISTS ${q(st.name)};`;
    case "add_foreign_key": {
      const fk = st.foreignKey;
      return addConstraint(st.table, fk.name, `FOREIGN KEY (${q(fk.column)}) REFERENCES ${q(fk.refTable)} ("id") ON DELETE ${fk.onDelete}`);
    }
    case "rename_constraint":
      return `ALTER TABLE ${q(st.table)} RENAME CONSTRAINT ${q(st.from)} TO ${q(st.to)};`;
    case "create_index":
      return `CREATE ${st.index.unique ? "UNIQUE " : ""}INDEX IF NOT EXISTS ${q(st.index.name)} ON ${q(st.table)} (${st.index.columns.map(q).join(", ")});`;
    case "drop_index":
      return `DROP INDEX IF EXISTS ${q(st.name)};`;
    case "rename_index":
      return `ALTER INDEX IF EXISTS ${q(st.from)} RENAME TO ${q(st.to)};`;
    case "create_row_counting":
      return `${ROW_COUNTING_SQL}\n\n${ROW_VERSIONS_SQL}`;
    case "count_rows": {
      const table = quoteLiteral(st.table);
      const alive = st.alive ? "true" : "false";
      return st.counted
        ? `SELECT ${q("row_counts_install")}(${table}, ${alive}), ${q("row_versions_remove")}(${table});`
        : `SELECT ${q("row_counts_remove")}(${table}), ${q("row_versions_install")}(${table}, ${alive});`;
    }
    case "forget_row_counts":
      return `DELETE FROM ${q(ROW_COUNTS_TABLE)} WHERE to_regclass(quote_ident("table_name")) IS NULL;`;
    default:
      return unreachable(st);
  }
}

/**
 * The functions that keep row_counts exact (`list_total: counter`). A statement-level trigger adds
 * the number of rows an INSERT or DELETE changed (COPY and INSERT ... SELECT included) to the
 * counter of the connection's process id modulo ROW_COUNT_SHARDS. An update holds its counter row
 * until the transaction commits, so one shared counter would queue every concurrent write behind
 * the one before; connections opened together have consecutive process ids, hence counters of
 * their own. The app reads sum(n) in the statement that reads the page: total and rows come from
 * one snapshot. row_counts_install() sets a table up, or repairs it (counters missing, the table
 * renamed, soft delete added), under a lock that holds the table's writes back between the count
 * and the triggers; row_counts_remove() undoes it when the contract no longer asks for counting.
 */
const ROW_COUNTING_SQL = (() => {
  const counters = q(ROW_COUNTS_TABLE);
  const shard = `pg_backend_pid() % ${ROW_COUNT_SHARDS}`;
  const fn = (name: string, declare: string, body: string): string =>
    `CREATE OR REPLACE FUNCTION ${q(name)}() RETURNS trigger LANGUAGE plpgsql AS ${DO_TAG}\n${declare}BEGIN\n${body}\nEND\n${DO_TAG};`;
  const changed = (filter: string): string =>
    `  SELECT count(*) INTO d FROM "changed"${filter};\n` +
    `  IF d <> 0 THEN\n` +
    `    UPDATE ${counters} SET "n" = "n" + CASE TG_OP WHEN 'DELETE' THEN -d ELSE d END\n` +
    `    WHERE "table_name" = TG_TABLE_NAME AND "shard" = ${shard};\n` +
    `  END IF;\n  RETURN NULL;`;
  const alive = ` WHERE "${SOFT_DELETE_COLUMN}" IS NOT TRUE`;
  const triggers = ["inserted", "deleted", "flipped", "truncated"];
  const dropTriggers = (indent: string): string[] =>
    triggers.map((t) => `${indent}EXECUTE format('DROP TRIGGER IF EXISTS "row_counts_${t}" ON %I', tbl);`);
  const remove = [
    `CREATE OR REPLACE FUNCTION "row_counts_remove"("tbl" TEXT) RETURNS void LANGUAGE plpgsql AS ${DO_TAG}`,
    `BEGIN`,
    `  IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = quote_ident(tbl)::regclass AND tgname = 'row_counts_inserted') THEN`,
    ...dropTriggers("    "),
    `  END IF;`,
    `  DELETE FROM ${counters} WHERE "table_name" = tbl;`,
    `END`,
    `${DO_TAG};`,
  ].join("\n");
  const install = [
    `CREATE OR REPLACE FUNCTION "row_counts_install"("tbl" TEXT, "alive" BOOLEAN) RETURNS void LANGUAGE plpgsql AS ${DO_TAG}`,
    `DECLARE`,
    `  rel regclass := quote_ident(tbl)::regclass;`,
    `  fn TEXT := CASE WHEN alive THEN 'row_counts_changed_alive' ELSE 'row_counts_changed' END;`,
    `BEGIN`,
    `  IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = rel AND tgname = 'row_counts_inserted' AND tgfoid = fn::regproc)`,
    `     AND EXISTS (SELECT 1 FROM ${counters} WHERE "table_name" = tbl) THEN`,
    `    RETURN;`,
    `  END IF;`,
    `  EXECUTE format('LOCK TABLE %I IN SHARE ROW EXCLUSIVE MODE', tbl);`,
    ...dropTriggers("  "),
    `  DELETE FROM ${counters} WHERE "table_name" = tbl;`,
    `  INSERT INTO ${counters} ("table_name", "shard", "n") SELECT tbl, s, 0 FROM generate_series(0, ${ROW_COUNT_SHARDS - 1}) AS s;`,
    `  EXECUTE format('UPDATE ${counters} SET "n" = (SELECT count(*) FROM %I%s) WHERE "table_name" = %L AND "shard" = 0',`,
    `    tbl, CASE WHEN alive THEN '${alive.replaceAll("'", "''")}' ELSE '' END, tbl);`,
    `  EXECUTE format('CREATE TRIGGER "row_counts_inserted" AFTER INSERT ON %I REFERENCING NEW TABLE AS "changed" '`,
    `    'FOR EACH STATEMENT EXECUTE FUNCTION %I()', tbl, fn);`,
    `  EXECUTE format('CREATE TRIGGER "row_counts_deleted" AFTER DELETE ON %I REFERENCING OLD TABLE AS "changed" '`,
    `    'FOR EACH STATEMENT EXECUTE FUNCTION %I()', tbl, fn);`,
    `  EXECUTE format('CREATE TRIGGER "row_counts_truncated" AFTER TRUNCATE ON %I '`,
    `    'FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_truncated"()', tbl);`,
    `  IF alive THEN`,
    `    EXECUTE format('CREATE TRIGGER "row_counts_flipped" AFTER UPDATE OF "${SOFT_DELETE_COLUMN}" ON %I FOR EACH ROW '`,
    `      'WHEN ((OLD."${SOFT_DELETE_COLUMN}" IS TRUE) IS DISTINCT FROM (NEW."${SOFT_DELETE_COLUMN}" IS TRUE)) '`,
    `      'EXECUTE FUNCTION "row_counts_flipped"()', tbl);`,
    `  END IF;`,
    `END`,
    `${DO_TAG};`,
  ].join("\n");
  return [
    fn("row_counts_changed", "DECLARE\n  d BIGINT;\n", changed("")),
    fn("row_counts_changed_alive", "DECLARE\n  d BIGINT;\n", changed(alive)),
    fn(
      "row_counts_flipped",
      "",
      `  UPDATE ${counters} SET "n" = "n" + CASE WHEN NEW."${SOFT_DELETE_COLUMN}" IS TRUE THEN -1 ELSE 1 END\n` +
        `  WHERE "table_name" = TG_TABLE_NAME AND "shard" = ${shard};\n  RETURN NULL;`,
    ),
    fn("row_counts_truncated", "", `  UPDATE ${counters} SET "n" = 0 WHERE "table_name" = TG_TABLE_NAME;\n  RETURN NULL;`),
    install,
    remove,
  ].join("\n\n");
})();

/**
 * What lets the app keep the total of a counted list (`list_total: count`, the default) between
 * writes: one sequence, "${ROW_VERSIONS_SEQUENCE}", that a statement-level trigger on every such table
 * advances after each INSERT, DELETE or TRUNCATE (and each UPDATE of the soft-delete flag). A
 * sequence, because nextval() is seen by every session at once, committed or not, and never waits
 * on another writer. app/repositories/postgres.py reuses a count while the version it was counted
 * at is still current; why that is exact is written there. row_versions_install() puts the triggers
 * on a table unless they are there (no lock taken on every start); row_versions_remove() takes them
 * off a table whose totals come from counters instead.
 */
const ROW_VERSIONS_SQL = (() => {
  const has = (name: string): string => `EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = rel AND tgname = '${name}')`;
  const create = (name: string, events: string): string =>
    `EXECUTE format('CREATE TRIGGER "${name}" AFTER ${events} ON %I FOR EACH STATEMENT '\n` +
    `      'EXECUTE FUNCTION "row_versions_bump"()', tbl);`;
  const drop = (name: string): string => `EXECUTE format('DROP TRIGGER "${name}" ON %I', tbl);`;
  return [
    `CREATE SEQUENCE IF NOT EXISTS ${q(ROW_VERSIONS_SEQUENCE)};`,
    `CREATE OR REPLACE FUNCTION "row_versions_bump"() RETURNS trigger LANGUAGE plpgsql AS ${DO_TAG}`,
    `BEGIN\n  PERFORM nextval('${q(ROW_VERSIONS_SEQUENCE)}');\n  RETURN NULL;\nEND\n${DO_TAG};`,
    "",
    `CREATE OR REPLACE FUNCTION "row_versions_install"("tbl" TEXT, "alive" BOOLEAN) RETURNS void LANGUAGE plpgsql AS ${DO_TAG}`,
    `DECLARE\n  rel regclass := quote_ident(tbl)::regclass;\nBEGIN`,
    `  IF NOT ${has("row_versions_bumped")} THEN`,
    `    ${create("row_versions_bumped", "INSERT OR DELETE OR TRUNCATE")}`,
    `  END IF;`,
    `  IF alive AND NOT ${has("row_versions_flipped")} THEN`,
    `    ${create("row_versions_flipped", `UPDATE OF "${SOFT_DELETE_COLUMN}"`)}`,
    `  ELSIF NOT alive AND ${has("row_versions_flipped")} THEN`,
    `    ${drop("row_versions_flipped")}`,
    `  END IF;`,
    `END\n${DO_TAG};`,
    "",
    `CREATE OR REPLACE FUNCTION "row_versions_remove"("tbl" TEXT) RETURNS void LANGUAGE plpgsql AS ${DO_TAG}`,
    `DECLARE\n  rel regclass := quote_ident(tbl)::regclass;\nBEGIN`,
    ...["row_versions_bumped", "row_versions_flipped"].flatMap((name) => [`  IF ${has(name)} THEN`, `    ${drop(name)}`, `  END IF;`]),
    `END\n${DO_TAG};`,
  ].join("\n");
})();

/** The warning of a statement as the text of its SQL comment (`destructive: drop table ...`). */
export function statementWarning(st: Statement): string | null {
  const w = warningOf(st);
  return w === null ? null : `${w.kind}: ${w.message}`;
}

/**
 * What a user must read before applying a statement, or null. `destructive` marks steps that can
 * lose data or fail on existing rows; `review` marks steps that hold back (a NOT NULL that cannot be
 * enforced yet, a new check that existing rows must satisfy).
 */
export function warningOf(st: Statement): GenerationWarning | null {
  switch (st.type) {
    case "drop_table":
      return { kind: "destructive", message: `drop table ${st.table} (all its rows are lost)`, table: st.table };
    case "drop_column":
      return {
        kind: "destructive",
        message: `drop column ${st.table}.${st.column} (its data is lost)`,
        table: st.table,
        column: st.column,
      };
    case "drop_sequence":
      return { kind: "destructive", message: `drop sequence ${st.name} (its counter is lost)` };
    case "alter_column_type":
      return isWidening(st.from, st.to)
        ? null
        : {
            kind: "destructive",
            message: `narrow ${st.table}.${st.column} from ${st.from} to ${st.to} (values may be rounded, truncated or fail to convert)`,
            table: st.table,
            column: st.column,
          };
    case "set_not_null":
      return st.fill !== null
        ? {
            kind: "destructive",
            message: `${st.table}.${st.column} becomes NOT NULL; rows holding NULL get the default ${st.fill}`,
            table: st.table,
            column: st.column,
          }
        : {
            kind: "destructive",
            message: `${st.table}.${st.column} becomes NOT NULL; enforced only when no row holds NULL (fill them, then regenerate)`,
            table: st.table,
            column: st.column,
          };
    case "add_column":
      return st.column.notNull && st.column.default === null
        ? {
            kind: "review",
            message: `${st.table}.${st.column.name} is required without a default; added as nullable, NOT NULL enforced only when the table is empty`,
            table: st.table,
            column: st.column.name,
          }
        : null;
    case "add_check":
      return st.mayRejectRows
        ? {
            kind: "review",
            message: `existing rows of ${st.table} must satisfy ${st.check.name}`,
            table: st.table,
            column: st.check.column,
          }
        : null;
    case "create_sequence":
    case "create_table":
    case "ensure_columns":
    case "rename_table":
    case "rename_column":
    case "drop_not_null":
    case "set_default":
    case "drop_default":
    case "drop_check":
    case "add_foreign_key":
    case "drop_foreign_key":
    case "rename_constraint":
    case "create_index":
    case "drop_index":
    case "rename_index":
    case "create_row_counting":
    case "count_rows":
    case "forget_row_counts":
      return null;
    default:
      return unreachable(st);
  }
}

function unreachable(st: never): never {
  throw new Error(`no convertor for statement ${JSON.stringify(st)}`);
}

export function columnDefinition(c: ColumnModel): string {
  let s = `${q(c.name)} ${c.type}`;
  if (c.primaryKey) s += " PRIMARY KEY";
  else if (c.notNull) s += " NOT NULL";
  if (c.default !== null) s += ` DEFAULT ${c.default}`;
  return s;
}

/**
 * A column added to a table that may hold rows. With a default (or nullable) it is one ALTER; a
 * required column without a default is added nullable and made NOT NULL only if no row is NULL,
 * so the migration never fails on existing data.
 */
function addColumn(table: string, c: ColumnModel): string {
  if (!c.notNull || c.default !== null) return `ALTER TABLE ${q(table)} ADD COLUMN IF NOT EXISTS ${columnDefinition(c)};`;
  const nullable = columnDefinition({ ...c, notNull: false });
  return `ALTER TABLE ${q(table)} ADD COLUMN IF NOT EXISTS ${nullable};\n${notNullWhenNoNulls(table, c.name)}`;
}

function notNullWhenNoNulls(table: string, column: string): string {
  return doBlock(
    `IF NOT EXISTS (SELECT 1 FROM ${q(table)} WHERE ${q(column)} IS NULL) THEN`,
    `  ALTER TABLE ${q(table)} ALTER COLUMN ${q(column)} SET NOT NULL;`,
  );
}

/** ADD CONSTRAINT unless a constraint of that name already exists on the table. */
function addConstraint(table: string, name: string, definition: string): string {
  return doBlock(
    `IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = ${quoteLiteral(name)} AND conrelid = ${quoteLiteral(q(table))}::regclass) THEN`,
    `  ALTER TABLE ${q(table)} ADD CONSTRAINT ${q(name)} ${definition};`,
  );
}

function doBlock(condition: string, body: string): string {
  return `DO ${DO_TAG}\nBEGIN\n  ${condition}\n  ${body}\n  END IF;\nEND\n${DO_TAG};`;
}

export function checkExpression(check: CheckModel, type: SqlType): string {
  const col = q(check.column);
  const length = type === "JSONB" ? `jsonb_array_length(${col})` : `char_length(${col})`;
  const v = check.value;
  switch (check.kind) {
    case "enum":
      return `${col} IN (${(Array.isArray(v) ? v : [v]).map((x) => sqlLiteral(x, type)).join(", ")})`;
    case "min":
      return `${col} >= ${String(v)}`;
    case "max":
      return `${col} <= ${String(v)}`;
    case "min_length":
      return `${length} >= ${String(v)}`;
    case "max_length":
      return `${length} <= ${String(v)}`;
    case "pattern":
      return `${col} ~ ${quoteLiteral(String(v))}`;
    default:
      return unreachableKind(check.kind);
  }
}

function unreachableKind(kind: never): never {
  throw new Error(`unknown check kind ${String(kind)}`);
}

/**
 * The USING expression of a type change. Plain casts where PostgreSQL has them; JSON goes through
 * to_jsonb (any value becomes valid JSON) and back through `#>> '{}'` (a JSON string becomes its
 * text, without quotes); booleans and numbers convert through integers.
 */
export function castExpression(col: string, from: SqlType, to: SqlType): string {
  if (to === "JSONB") return `to_jsonb(${col})`;
  if (from === "JSONB") return to === "TEXT" ? `${col} #>> '{}'` : `(${col} #>> '{}')::${to}`;
  if (from === "BOOLEAN" && (to === "BIGINT" || to === "DOUBLE PRECISION")) return `${col}::integer::${to}`;
  if ((from === "BIGINT" || from === "DOUBLE PRECISION") && to === "BOOLEAN") return `${col} <> 0`;
  return `${col}::${to}`;
}
