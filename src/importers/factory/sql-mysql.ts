import sqlParser from "node-sql-parser";
import { asRecord as rec } from "../../contracts/unchecked.js";
import type { ForeignKey, ImportTable, SourceLocation } from "../model.js";
import { ImportError } from "../model.js";
import { type ColumnFacts, columnField } from "./sql-columns.js";
import type { Check, SchemaState } from "./sql-schema.js";
import type { SqlStatement } from "./sql-statements.js";

type Node = Record<string, unknown>;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

const parser = new sqlParser.Parser();

/** One MySQL statement, parsed by node-sql-parser's MySQL grammar, applied to the schema. */
export function applyMysql(state: SchemaState, stmt: SqlStatement, at: SourceLocation): void {
  const words = stmt.text
    .slice(0, 80)
    .toLowerCase()
    .split(/[^a-z_]+/)
    .filter(Boolean);
  const head = `${words[0] ?? ""} ${words[1] ?? ""}`;
  const relevant =
    head === "create table" ||
    (head === "create temporary" && words[2] === "table") ||
    head === "alter table" ||
    head === "drop table" ||
    head === "create index" ||
    (head === "create unique" && words[2] === "index");
  if (!relevant) {
    state.skip(head.trim().toUpperCase() || "statement", at);
    return;
  }
  let ast: unknown;
  try {
    ast = parser.astify(mysqlSpellings(state, stmt.text, at), { database: "MySQL" });
  } catch (e) {
    const loc = rec(rec(rec(e).location).start);
    const line = typeof loc.line === "number" ? stmt.line + loc.line - 1 : stmt.line;
    const place: SourceLocation = { file: at.file, line };
    if (typeof loc.column === "number") place.column = loc.line === 1 ? stmt.column + loc.column - 1 : loc.column;
    const found = rec(e).found;
    const what = typeof found === "string" ? `unexpected ${JSON.stringify(found)}` : "unexpected end of statement";
    if (head.startsWith("create t")) throw new ImportError(`unsupported SQL in CREATE TABLE (mysql grammar): ${what}`, place);
    state.note(`${head.toUpperCase()} statement`, `the mysql parser does not read it (${what})`, place);
    return;
  }
  for (const node of arr(ast).map(rec)) applyNode(state, node, at);
}

/**
 * Valid MySQL the grammar lacks, respelled before parsing: the national character types are their
 * plain forms (MySQL stores both as utf8), and `BINARY` after a character type (a case-sensitive
 * collation, noted) is dropped.
 */
function mysqlSpellings(state: SchemaState, text: string, at: SourceLocation): string {
  let out = text.replace(/\bN(VARCHAR|CHAR)\b/gi, "$1").replace(/\bNATIONAL\s+(VARCHAR|CHAR)\b/gi, "$1");
  out = out.replace(/(\b(?:VAR)?CHAR\s*\(\s*\d+\s*\))\s+BINARY\b/gi, (_m, type: string) => {
    state.note(`${type} BINARY`, "a case-sensitive (binary) collation; the contract's strings compare as the database does", at, "changed");
    return type;
  });
  return out;
}

function applyNode(state: SchemaState, node: Node, at: SourceLocation): void {
  if (node.type === "create" && node.keyword === "table") {
    const t = state.createTable(tableName(arr(node.table)[0]), at, Boolean(node.if_not_exists));
    if (!t) return;
    for (const def of arr(node.create_definitions).map(rec)) {
      if (def.resource === "column") addColumn(state, t, def, at);
      else constraint(state, t, def, at);
    }
    return;
  }
  if (node.type === "create" && node.keyword === "index") {
    const name = tableName(node.table);
    state.index(state.table(name), name, str(node.index) ?? "", arr(node.index_columns).map(columnName), node.index_type === "unique", at);
    return;
  }
  if (node.type === "alter") {
    const name = tableName(arr(node.table)[0]);
    const t = state.table(name);
    if (!t) {
      state.note("ALTER TABLE", `table '${name}' is not defined before it`, at);
      return;
    }
    for (const e of arr(node.expr).map(rec)) {
      if (e.action === "add" && e.resource === "column") addColumn(state, t, e, at);
      else if (e.action === "add" && (e.resource === "constraint" || e.resource === "index"))
        constraint(state, t, rec(e.create_definitions ?? e), at);
      else if (e.action === "drop" && e.resource === "column") {
        const col = columnName(e.column);
        t.fields = t.fields.filter((f) => f.name !== col);
        // The column's foreign keys go with it (MySQL refuses the drop otherwise; a dump drops them first).
        t.foreignKeys = t.foreignKeys.filter((fk) => !fk.columns.includes(col));
      } else if (e.action === "drop" && e.keyword === "foreign key" && typeof e.key === "string") {
        const key = e.key;
        t.foreignKeys = t.foreignKeys.filter((fk) => fk.name !== key);
      } else state.note(`ALTER TABLE ${t.name} ${String(e.action ?? "").toUpperCase()}`, "not part of the data model", at);
    }
    return;
  }
  if (node.type === "drop") {
    for (const n of arr(node.name)) state.dropTable(tableName(n));
    return;
  }
  state.skip(String(node.type ?? "statement").toUpperCase(), at);
}

function addColumn(state: SchemaState, t: ImportTable, def: Node, at: SourceLocation): void {
  const d = rec(def.definition);
  const rawType = String(d.dataType ?? "").toLowerCase();
  const facts: ColumnFacts = { name: columnName(def.column), rawType };
  if (typeof d.length === "number") facts.length = d.length;
  const listed = arr(rec(d.expr).value)
    .map((v) => str(rec(v).value))
    .filter((v): v is string => v !== undefined);
  if (rawType === "enum") facts.enumValues = listed;
  else if (rawType === "set") {
    // A SET holds any number of its values: a list, whose allowed values a contract cannot enforce.
    facts.rawType = "varchar";
    facts.isArray = true;
    state.note(
      `${t.name}.${facts.name}`,
      `SET(${listed.join(", ")}) becomes an array of strings; its allowed values are not enforced`,
      at,
      "changed",
    );
  }
  if (rec(def.nullable).type === "not null") facts.notNull = true;
  if (def.primary_key) facts.primaryKey = true;
  if (def.unique || def.unique_or_primary === "unique") facts.unique = true;
  if (def.auto_increment) facts.autoIncrement = true;
  const comment = str(rec(rec(def.comment).value).value);
  if (comment) facts.comment = comment;
  if (def.default_val) {
    const v = rec(rec(def.default_val).value);
    if (rec(v.over).type === "on update") facts.onUpdateNow = true;
    const constant = literal(v);
    // `CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP` is read as its default; the ON UPDATE part is the flag above.
    const expression = expressionText(v).replace(/\s+ON\s+UPDATE\s+.*$/i, "");
    facts.defaultValue = constant !== undefined ? { constant } : v.type === "null" ? { null: true } : { expression };
  }
  t.fields.push(columnField(state, t, facts, at));
  if (def.reference_definition) t.foreignKeys.push(foreignKey([facts.name], rec(def.reference_definition)));
  for (const expr of arr(rec(def.check).definition)) state.applyCheck(t, toCheck(rec(expr)), at);
}

function constraint(state: SchemaState, t: ImportTable, def: Node, at: SourceLocation): void {
  const type = String(def.constraint_type ?? "").toLowerCase();
  const cols = arr(def.definition).map(columnName);
  if (type === "primary key") t.primaryKey = cols;
  else if (type === "foreign key") {
    // Migrations drop and re-add a key to change it: a key on the same columns replaces the earlier one.
    const fk = foreignKey(cols, rec(def.reference_definition));
    const name = str(def.constraint);
    if (name) fk.name = name;
    t.foreignKeys = t.foreignKeys.filter((x) => x.columns.join() !== fk.columns.join());
    t.foreignKeys.push(fk);
  } else if (type.startsWith("unique")) state.markUnique(t, cols, at);
  else if (type === "check") for (const expr of arr(def.definition)) state.applyCheck(t, toCheck(rec(expr)), at);
  else if (def.resource === "index") state.index(t, t.name, str(def.index) ?? "", cols, false, at);
  else state.note(`${type || "constraint"} on ${t.name}`, "not part of the data model", at);
}

function toCheck(e: Node): Check {
  const op = String(e.operator ?? "").toUpperCase();
  if (op === "AND") return { kind: "and", parts: [toCheck(rec(e.left)), toCheck(rec(e.right))] };
  const left = rec(e.left);
  const column = left.type === "column_ref" ? columnName(left) : undefined;
  if (column && op === "IN") {
    const values = arr(rec(e.right).value).map((v) => literal(rec(v)));
    if (values.every((v): v is string | number => typeof v === "string" || typeof v === "number")) return { kind: "in", column, values };
  }
  const bound = literal(rec(e.right));
  if (column && typeof bound === "number" && [">", ">=", "<", "<="].includes(op)) return { kind: "compare", column, op, value: bound };
  if (column && op === "BETWEEN") {
    const [low, high] = arr(rec(e.right).value).map((v) => literal(rec(v)));
    if (typeof low === "number" && typeof high === "number") return { kind: "between", column, low, high };
  }
  if (left.type === "function" && typeof bound === "number") {
    const fn = expressionText(rec(left.name)).toLowerCase();
    const arg = columnName(arr(rec(left.args).value)[0]);
    if (["length", "char_length", "character_length"].includes(fn) && arg) return { kind: "length", column: arg, op, value: bound };
  }
  return { kind: "other", text: expressionText(e) };
}

function foreignKey(columns: string[], ref: Node): ForeignKey {
  const fk: ForeignKey = { columns, table: tableName(arr(ref.table)[0]), targetColumns: arr(ref.definition).map(columnName) };
  const action = arr(ref.on_action)
    .map(rec)
    .find((a) => a.type === "on delete");
  // Without ON DELETE, MySQL refuses the delete (NO ACTION, checked at once as RESTRICT).
  const spelled = String(rec(action?.value).value ?? "no action").toUpperCase();
  fk.onDelete = spelled === "CASCADE" ? "cascade" : spelled === "SET NULL" ? "set_null" : "restrict";
  fk.onDeleteSource = spelled;
  return fk;
}

function tableName(t: unknown): string {
  return str(rec(t).table) ?? str(t) ?? "";
}

/** Column references come as `{column: "x"}` or `{column: {expr: {value: "x"}}}`. */
function columnName(c: unknown): string {
  const col = rec(c).column ?? c;
  if (typeof col === "string") return col;
  return str(rec(rec(col).expr).value) ?? str(rec(col).value) ?? "";
}

function literal(v: Node): string | number | boolean | undefined {
  switch (v.type) {
    case "single_quote_string":
    case "string":
    case "double_quote_string":
      return typeof v.value === "string" ? v.value : undefined;
    case "number": {
      // The grammar keeps decimals as text ("4.99").
      const n = typeof v.value === "number" ? v.value : Number(v.value);
      return Number.isFinite(n) ? n : undefined;
    }
    case "bool":
    case "boolean":
      return typeof v.value === "boolean" ? v.value : undefined;
    default:
      return undefined;
  }
}

function expressionText(v: Node): string {
  try {
    const text = parser.exprToSQL(v as never, { database: "MySQL" });
    return typeof text === "string" ? text : String(v.type);
  } catch {
    if (v.type === "function") return `${expressionText(rec(v.name))}()`;
    if (Array.isArray(v.name)) return v.name.map((p) => str(rec(p).value) ?? "").join(".");
    return str(v.value) ?? String(v.type ?? "expression");
  }
}
