import { loadModule, parseSync } from "libpg-query";
import { asRecord as rec } from "../../contracts/unchecked.js";
import type { ForeignKey, ImportField, ImportTable, OnDelete, SourceLocation } from "../model.js";
import { ImportError } from "../model.js";
import { applyDefault, type ColumnFacts, columnField } from "./sql-columns.js";
import type { Check, SchemaState } from "./sql-schema.js";
import type { SqlStatement } from "./sql-statements.js";

type Node = Record<string, unknown>;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

let loaded: Promise<void> | undefined;

/** PostgreSQL's own parser, compiled to WebAssembly; loaded once, on first use. */
export function loadPostgresParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

/** One statement, parsed by libpg-query, applied to the schema. */
export function applyPostgres(state: SchemaState, stmt: SqlStatement, at: SourceLocation): void {
  const result = parseStatement(state, stmt, at);
  if (!result) return;
  for (const raw of arr(result.stmts)) {
    const wrapper = rec(rec(raw).stmt);
    const kind = Object.keys(wrapper)[0] ?? "statement";
    const node = rec(wrapper[kind]);
    const loc = (offset: unknown): SourceLocation => position(stmt, at.file, typeof offset === "number" ? offset : 0);
    const apply = STATEMENTS.get(kind);
    if (apply) apply({ state, node, at, loc });
    else state.skip(statementLabel(kind), at);
  }
}

/**
 * The statement's parse tree, or undefined when PostgreSQL's parser refuses it: a refused CREATE
 * TABLE or CREATE TYPE is an error with its place (the model would miss a table or a type), any
 * other refused statement a note.
 */
function parseStatement(state: SchemaState, stmt: SqlStatement, at: SourceLocation): Node | undefined {
  try {
    return rec(parseSync(stmt.text));
  } catch (e) {
    const details = rec(rec(e).sqlDetails);
    const offset = typeof details.cursorPosition === "number" ? details.cursorPosition : 0;
    const message = e instanceof Error ? e.message : String(e);
    const place = position(stmt, at.file, offset);
    if (/^create\s+(unlogged\s+|temporary\s+|temp\s+)?table\b/i.test(stmt.text) || /^create\s+type\b/i.test(stmt.text)) {
      throw new ImportError(`unsupported SQL (postgres grammar): ${message}`, place);
    }
    state.note(
      `statement ${stmt.text.split(/\s+/).slice(0, 2).join(" ").toUpperCase()}`,
      `PostgreSQL's parser refuses it (${message})`,
      place,
    );
    return undefined;
  }
}

/** One parsed statement and where it is: `at` the statement, `loc` a parser offset inside it. */
interface Parsed {
  state: SchemaState;
  node: Node;
  at: SourceLocation;
  loc: (offset: unknown) => SourceLocation;
}

/** The statement kinds the data model is built from, one handler each; every other kind is counted as skipped. */
const STATEMENTS = new Map<string, (p: Parsed) => void>([
  ["CreateEnumStmt", ({ state, node }) => state.addEnumType(lastName(node.typeName), arr(node.vals).map(stringOf))],
  ["AlterEnumStmt", alterEnum],
  ["RenameStmt", rename],
  ["CreateDomainStmt", createDomain],
  ["CreateStmt", createTable],
  ["AlterTableStmt", alterTable],
  ["IndexStmt", createIndex],
  ["DropStmt", drop],
  ["CommentStmt", comment],
]);

function alterEnum({ state, node, at }: Parsed): void {
  const type = lastName(node.typeName);
  if (typeof node.newVal === "string") {
    if (!state.addEnumValue(type, node.newVal)) state.note(`ALTER TYPE ${type}`, "the type is not defined before it", at);
  } else if (typeof node.oldVal === "string")
    state.note(`ALTER TYPE ${type} RENAME VALUE`, "enum values renamed in place are not followed", at);
}

function rename({ state, node, at }: Parsed): void {
  const rel = String(rec(node.relation).relname ?? "");
  const to = String(node.newname ?? "");
  if (node.renameType === "OBJECT_TABLE") state.renameTable(rel, to);
  else if (node.renameType === "OBJECT_COLUMN") {
    const t = state.table(rel);
    if (t) state.renameColumn(t, String(node.subname), to);
  } else if (node.renameType === "OBJECT_TYPE") state.renameEnumType(lastName(rec(rec(node.object).List).items), to);
  else state.skip(`RENAME (${String(node.renameType ?? "").replace(/^OBJECT_/, "")})`, at);
}

function createDomain({ state, node }: Parsed): void {
  const names = arr(rec(node.typeName).names).map(stringOf);
  state.domains.set(lastName(node.domainname).toLowerCase(), {
    rawType: names[names.length - 1] ?? "text",
    checks: arr(node.constraints)
      .map((c) => rec(rec(c).Constraint))
      .filter((c) => c.contype === "CONSTR_CHECK")
      .map((c) => rec(c.raw_expr)),
  });
}

function createTable({ state, node, loc }: Parsed): void {
  const rel = rec(node.relation);
  const parent = arr(node.inhRelations).map((r) => String(rec(rec(r).RangeVar).relname))[0];
  if (parent !== undefined) {
    state.partitions.set(String(rel.relname).toLowerCase(), parent);
    state.note(
      String(rel.relname),
      `${node.partbound ? "a partition" : "inherits the rows"} of ${parent}: its rows are ${parent}'s, not a separate entity`,
      loc(rel.location),
      "changed",
      "table",
    );
    return;
  }
  const t = state.createTable(String(rel.relname), loc(rel.location), node.if_not_exists === true);
  if (!t) return;
  for (const el of arr(node.tableElts).map(rec)) {
    if (el.ColumnDef) addColumn(state, t, rec(el.ColumnDef), loc);
    else if (el.Constraint) constraint(state, t, rec(el.Constraint), loc);
    else state.note(`${t.name}: ${Object.keys(el)[0]}`, "not part of the data model", loc(0));
  }
}

function alterTable(p: Parsed): void {
  const { state, node, at, loc } = p;
  const rel = rec(node.relation);
  // pg_dump alters sequences and views with ALTER TABLE too (OWNER TO, OWNED BY): not tables of the model.
  if (node.objtype !== undefined && node.objtype !== "OBJECT_TABLE") {
    state.skip(`ALTER ${String(node.objtype).replace(/^OBJECT_/, "")}`, at);
    return;
  }
  const cmds = arr(node.cmds).map((x) => rec(rec(x).AlterTableCmd));
  if (cmds.length > 0 && cmds.every((c) => String(c.subtype ?? "") === "AT_ChangeOwner")) {
    state.skip("ALTER TABLE ... OWNER TO", at);
    return;
  }
  const t = state.table(String(rel.relname));
  if (!t) {
    if (state.partitions.has(String(rel.relname).toLowerCase())) state.skip("ALTER TABLE of a partition", at);
    else state.note("ALTER TABLE", `table '${String(rel.relname)}' is not defined before it`, loc(rel.location));
    return;
  }
  for (const c of cmds) {
    const subtype = String(c.subtype ?? "");
    const apply = ALTER_TABLE.get(subtype);
    if (apply && (typeof c.name === "string" || !NAMED.has(subtype))) apply(p, t, c, rec(c.def));
    else state.skip(`ALTER TABLE ${subtype.replace(/^AT_/, "")}`, at);
  }
}

/** ALTER TABLE's subcommands the model follows, one handler each; the others are counted as skipped. */
type AlterCommand = (p: Parsed, t: ImportTable, cmd: Node, def: Node) => void;
const ALTER_TABLE = new Map<string, AlterCommand>([
  ["AT_AttachPartition", attachPartition],
  ["AT_AddConstraint", ({ state, loc }, t, _cmd, def) => constraint(state, t, rec(def.Constraint), loc)],
  ["AT_SetNotNull", (_p, t, cmd) => setRequired(t, cmd, true)],
  ["AT_DropNotNull", (_p, t, cmd) => setRequired(t, cmd, false)],
  ["AT_AlterColumnType", alterColumnType],
  ["AT_DropConstraint", dropConstraint],
  ["AT_AddColumn", ({ state, loc }, t, _cmd, def) => addColumn(state, t, rec(def.ColumnDef), loc)],
  ["AT_DropColumn", dropColumn],
  ["AT_ColumnDefault", columnDefault],
]);

/** Subcommands followed only when they name their column or constraint. */
const NAMED = new Set(["AT_DropConstraint", "AT_ColumnDefault"]);

function attachPartition({ state, at }: Parsed, t: ImportTable, _cmd: Node, def: Node): void {
  const child = String(rec(rec(def.PartitionCmd).name).relname);
  state.dropTable(child);
  state.partitions.set(child.toLowerCase(), t.name);
  state.note(child, `a partition of ${t.name} (ATTACH PARTITION): its rows are ${t.name}'s, not a separate entity`, at, "changed", "table");
}

function setRequired(t: ImportTable, cmd: Node, required: boolean): void {
  const f = t.fields.find((x) => x.name === cmd.name);
  if (f) f.required = required;
}

/** The new type read as a new column; what the column already had (NOT NULL, default, text) stays. */
function alterColumnType({ state, loc }: Parsed, t: ImportTable, cmd: Node, def: Node): void {
  const i = t.fields.findIndex((x) => x.name === cmd.name);
  const old = t.fields[i];
  if (!old) return;
  const probe: ImportTable = { ...t, fields: [], primaryKey: [], foreignKeys: [] };
  addColumn(state, probe, { ...rec(def.ColumnDef), colname: old.name }, loc);
  const next = probe.fields[0];
  if (!next) return;
  const kept: ImportField = { ...next, required: old.required === true };
  if (old.default !== undefined) kept.default = old.default;
  if (old.generated !== undefined) kept.generated = old.generated;
  if (old.description !== undefined) kept.description = old.description;
  t.fields[i] = kept;
}

/** DROP CONSTRAINT: a foreign key of that name is gone. */
function dropConstraint(_p: Parsed, t: ImportTable, cmd: Node): void {
  t.foreignKeys = t.foreignKeys.filter((fk) => fk.name !== cmd.name);
}

/** DROP COLUMN drops the column's foreign keys too. */
function dropColumn(_p: Parsed, t: ImportTable, cmd: Node): void {
  t.fields = t.fields.filter((f) => f.name !== cmd.name);
  t.foreignKeys = t.foreignKeys.filter((fk) => !fk.columns.includes(String(cmd.name)));
}

/** SET DEFAULT replaces what the column had; DROP DEFAULT (no expression) removes it. */
function columnDefault({ state, at }: Parsed, t: ImportTable, cmd: Node, def: Node): void {
  const f = t.fields.find((x) => x.name === cmd.name);
  if (!f) return;
  delete f.default;
  delete f.generated;
  const d = Object.keys(def).length > 0 ? defaultOf(def) : undefined;
  if (d) applyDefault(state, t, f, d, at);
}

function createIndex({ state, node, at, loc }: Parsed): void {
  const rel = rec(node.relation);
  if (state.partitions.has(String(rel.relname).toLowerCase())) {
    state.skip("CREATE INDEX on a partition", at);
    return;
  }
  const cols = arr(node.indexParams).map((p) => String(rec(rec(p).IndexElem).name ?? "(expression)"));
  state.index(
    state.table(String(rel.relname)),
    String(rel.relname),
    String(node.idxname ?? ""),
    cols,
    node.unique === true,
    loc(rel.location),
  );
}

function drop({ state, node, at }: Parsed): void {
  if (node.removeType === "OBJECT_TABLE")
    for (const o of arr(node.objects)) state.dropTable(lastName(rec(o).List ? rec(rec(o).List).items : o));
  else state.skip("DROP (not a table)", at);
}

/** COMMENT ON TABLE / COLUMN: the description of a table or a field. */
function comment({ state, node }: Parsed): void {
  const target = arr(rec(rec(node.object).List).items).map(stringOf);
  const text = typeof node.comment === "string" ? node.comment : undefined;
  if (!text) return;
  if (node.objtype === "OBJECT_TABLE") {
    const t = state.table(target[target.length - 1] ?? "");
    if (t) t.description = text;
  } else if (node.objtype === "OBJECT_COLUMN") {
    const t = state.table(target[target.length - 2] ?? "");
    const f = t?.fields.find((x) => x.name === target[target.length - 1]);
    if (f) f.description = text;
  }
}

function statementLabel(kind: string): string {
  return kind
    .replace(/Stmt$/, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toUpperCase();
}

function addColumn(state: SchemaState, t: ImportTable, col: Node, loc: (o: unknown) => SourceLocation): void {
  const typeName = rec(col.typeName);
  const names = arr(typeName.names).map(stringOf);
  const rawType = names[names.length - 1] ?? "text";
  const domain = state.domains.get(rawType.toLowerCase());
  const baseType = domain?.rawType ?? rawType;
  const facts: ColumnFacts = { name: String(col.colname), rawType: baseType === "bpchar" ? "char" : baseType };
  const mods = arr(typeName.typmods).map((m) => rec(rec(rec(m).A_Const).ival).ival);
  if (typeof mods[0] === "number" && /char/.test(facts.rawType)) facts.length = mods[0];
  if (arr(typeName.arrayBounds).length > 0) facts.isArray = true;
  const at = loc(col.location);
  const checks: Node[] = [];
  const fks: ForeignKey[] = [];
  let generated: string | undefined;
  for (const c of arr(col.constraints).map((x) => rec(rec(x).Constraint))) {
    switch (c.contype) {
      case "CONSTR_NOTNULL":
        facts.notNull = true;
        break;
      case "CONSTR_PRIMARY":
        facts.primaryKey = true;
        facts.notNull = true;
        break;
      case "CONSTR_UNIQUE":
        facts.unique = true;
        break;
      case "CONSTR_DEFAULT": {
        const d = defaultOf(rec(c.raw_expr));
        if (d) facts.defaultValue = d;
        break;
      }
      case "CONSTR_IDENTITY":
        facts.autoIncrement = true;
        break;
      case "CONSTR_FOREIGN":
        fks.push(foreignKey([facts.name], c));
        break;
      case "CONSTR_CHECK":
        checks.push(rec(c.raw_expr));
        break;
      case "CONSTR_GENERATED":
        generated = "GENERATED ALWAYS AS (...)";
        break;
      default:
        break;
    }
  }
  if (generated) {
    // A client could write the field, and nothing would compute it: it is left out, said so.
    state.note(
      `${t.name}.${facts.name}`,
      `${generated} is computed by the database; a contract field would be writable, so it is left out`,
      at,
    );
    return;
  }
  t.fields.push(columnField(state, t, facts, at));
  t.foreignKeys.push(...fks);
  for (const e of checks) state.applyCheck(t, toCheck(e), at);
  // A domain's CHECKs speak of VALUE: here, this column.
  for (const e of domain?.checks ?? []) state.applyCheck(t, onColumn(toCheck(rec(e)), "value", facts.name), at);
}

function constraint(state: SchemaState, t: ImportTable, c: Node, loc: (o: unknown) => SourceLocation): void {
  const at = loc(c.location);
  const keys = arr(c.keys).map(stringOf);
  switch (c.contype) {
    case "CONSTR_PRIMARY":
      t.primaryKey = keys;
      return;
    case "CONSTR_UNIQUE":
      state.markUnique(t, keys, at);
      return;
    case "CONSTR_FOREIGN": {
      // Migrations drop and re-add a key to change it: a key on the same columns replaces the earlier one.
      const fk = foreignKey(arr(c.fk_attrs).map(stringOf), c);
      t.foreignKeys = t.foreignKeys.filter((x) => x.columns.join() !== fk.columns.join());
      t.foreignKeys.push(fk);
      return;
    }
    case "CONSTR_CHECK":
      state.applyCheck(t, toCheck(rec(c.raw_expr)), at);
      return;
    default:
      state.note(
        `${String(c.contype ?? "constraint")
          .replace(/^CONSTR_/, "")
          .toLowerCase()} constraint on ${t.name}`,
        "not part of the data model",
        at,
      );
  }
}

/** `fk_del_action` letters: a NO ACTION, r RESTRICT, c CASCADE, n SET NULL, d SET DEFAULT. */
const PG_ON_DELETE: Record<string, [OnDelete, string]> = {
  a: ["restrict", "NO ACTION"],
  r: ["restrict", "RESTRICT"],
  c: ["cascade", "CASCADE"],
  n: ["set_null", "SET NULL"],
  d: ["restrict", "SET DEFAULT"],
};

function foreignKey(columns: string[], c: Node): ForeignKey {
  const fk: ForeignKey = { columns, table: String(rec(c.pktable).relname), targetColumns: arr(c.pk_attrs).map(stringOf) };
  if (typeof c.conname === "string") fk.name = c.conname;
  const [onDelete, spelled] = PG_ON_DELETE[String(c.fk_del_action ?? "a")] ?? PG_ON_DELETE.a ?? ["restrict", "NO ACTION"];
  fk.onDelete = onDelete;
  fk.onDeleteSource = spelled;
  return fk;
}

/** A default: a constant (through casts and a unary minus), null, or the expression's text. */
function defaultOf(e: Node): ColumnFacts["defaultValue"] {
  const constant = constantOf(e);
  if (constant !== undefined) return { constant };
  if (rec(e.A_Const).isnull === true) return { null: true };
  const fn = rec(e.FuncCall);
  if (Object.keys(fn).length > 0) return { expression: `${arr(fn.funcname).map(stringOf).pop() ?? "function"}()` };
  const sv = rec(e.SQLValueFunction);
  if (Object.keys(sv).length > 0)
    return {
      expression: String(sv.op ?? "")
        .replace(/^SVFOP_/, "")
        .toLowerCase(),
    };
  const cast = rec(e.TypeCast);
  if (Object.keys(cast).length > 0) return defaultOf(rec(cast.arg));
  return { expression: Object.keys(e)[0] ?? "expression" };
}

function constantOf(e: Node): string | number | boolean | undefined {
  const c = rec(e.A_Const);
  if (Object.keys(c).length > 0) {
    if (c.sval) return String(rec(c.sval).sval ?? "");
    if (c.ival) return Number(rec(c.ival).ival ?? 0);
    if (c.fval) return Number(rec(c.fval).fval);
    if (c.boolval) return rec(c.boolval).boolval === true;
    return undefined;
  }
  const cast = rec(e.TypeCast);
  if (Object.keys(cast).length > 0) {
    const inner = constantOf(rec(cast.arg));
    const type = arr(rec(cast.typeName).names).map(stringOf).pop();
    if (type === "bool" && typeof inner === "string") return inner === "t" || inner === "true";
    return inner;
  }
  const ex = rec(e.A_Expr);
  if (ex.kind === "AEXPR_OP" && stringOf(arr(ex.name)[0]) === "-" && !ex.lexpr) {
    const inner = constantOf(rec(ex.rexpr));
    return typeof inner === "number" ? -inner : undefined;
  }
  return undefined;
}

/** CHECK expressions: IN lists, `= ANY (ARRAY[...])` (pg_dump's spelling), comparisons, BETWEEN, length bounds. */
function toCheck(e: Node): Check {
  const bool = rec(e.BoolExpr);
  if (bool.boolop === "AND_EXPR") return { kind: "and", parts: arr(bool.args).map((a) => toCheck(rec(a))) };
  const x = rec(e.A_Expr);
  const op = stringOf(arr(x.name)[0]);
  const column = columnOf(rec(x.lexpr));
  if (column && x.kind === "AEXPR_IN") {
    const values = arr(rec(x.rexpr).List ? rec(rec(x.rexpr).List).items : x.rexpr).map((v) => constantOf(rec(v)));
    if (values.every((v): v is string | number => typeof v === "string" || typeof v === "number")) return { kind: "in", column, values };
  }
  if (column && x.kind === "AEXPR_OP_ANY" && op === "=") {
    const elements = arr(rec(rec(unwrapCast(rec(x.rexpr))).A_ArrayExpr).elements).map((v) => constantOf(rec(v)));
    if (elements.length > 0 && elements.every((v): v is string | number => typeof v === "string" || typeof v === "number"))
      return { kind: "in", column, values: elements };
  }
  const bound = constantOf(rec(x.rexpr));
  if (column && x.kind === "AEXPR_OP" && typeof bound === "number" && [">", ">=", "<", "<="].includes(op))
    return { kind: "compare", column, op, value: bound };
  if (column && x.kind === "AEXPR_BETWEEN") {
    const [low, high] = arr(rec(rec(x.rexpr).List).items ?? x.rexpr).map((v) => constantOf(rec(v)));
    if (typeof low === "number" && typeof high === "number") return { kind: "between", column, low, high };
  }
  const fn = rec(rec(x.lexpr).FuncCall);
  if (x.kind === "AEXPR_OP" && typeof bound === "number" && Object.keys(fn).length > 0) {
    const name = arr(fn.funcname).map(stringOf).pop() ?? "";
    const arg = columnOf(rec(arr(fn.args)[0]));
    if (arg && ["length", "char_length", "character_length"].includes(name)) return { kind: "length", column: arg, op, value: bound };
  }
  return { kind: "other", text: column ? `a condition on ${column}` : "a condition" };
}

function onColumn(c: Check, from: string, to: string): Check {
  if (c.kind === "and") return { kind: "and", parts: c.parts.map((p) => onColumn(p, from, to)) };
  if (c.kind === "other") return c;
  return c.column.toLowerCase() === from ? { ...c, column: to } : c;
}

function unwrapCast(e: Node): Node {
  const cast = rec(e.TypeCast);
  return Object.keys(cast).length > 0 ? unwrapCast(rec(cast.arg)) : e;
}

function columnOf(e: Node): string | undefined {
  const inner = unwrapCast(e);
  const fields = arr(rec(inner.ColumnRef).fields);
  return fields.length > 0 ? stringOf(fields[fields.length - 1]) : undefined;
}

function stringOf(v: unknown): string {
  const s = rec(rec(v).String);
  return typeof s.sval === "string" ? s.sval : typeof v === "string" ? v : "";
}

function lastName(v: unknown): string {
  const names = arr(v).map(stringOf);
  return names[names.length - 1] ?? "";
}

/** A parser offset inside a statement -> line and column in the file. */
function position(stmt: SqlStatement, file: string, offset: number): SourceLocation {
  const before = stmt.text.slice(0, offset);
  const lines = before.split("\n");
  const line = stmt.line + lines.length - 1;
  const column = lines.length === 1 ? stmt.column + before.length : (lines[lines.length - 1]?.length ?? 0) + 1;
  return { file, line, column };
}
