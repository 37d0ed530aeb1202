import type { CheckModel, ColumnModel, ForeignKeyModel, IndexModel, SchemaModel, TableModel } from "../postgres/model.js";
import { columnMap } from "../postgres/model.js";
import type { Statement } from "../postgres/statements.js";
import { MAX_IDENTIFIER_BYTES } from "../postgres/types.js";

/**
 * Column renames declared in the contracts (`renamed_from`): table key -> new column -> old column.
 * Kept apart from the snapshot because they describe a change, not a state.
 */
export type ColumnRenames = ReadonlyMap<string, ReadonlyMap<string, string>>;

/**
 * Diffs two schema models into statements (drizzle-kit's diff). Tables are matched by key, so a new
 * `spec.table` is a rename; columns by name, or through `renamed_from`, so a renamed field keeps its
 * data. Constraints and indexes are matched by what they constrain (column and kind) after those
 * renames: one whose definition is unchanged but whose derived name is different is renamed,
 * which keeps schema.sql's by-name existence checks true on a migrated database.
 *
 * The output is ordered so that every statement is valid where it stands:
 *   1. drop foreign keys, checks and indexes that go away or change (old table names)
 *   2. drop tables
 *   3. rename tables, then columns, then constraints and indexes
 *   4. drop columns
 *   5. create sequences, create tables, add columns, alter columns
 *   6. add checks, foreign keys and indexes
 *   7. drop sequences no longer used
 */
export function diffSchemas(prev: SchemaModel, next: SchemaModel, renames: ColumnRenames = new Map()): Statement[] {
  const out = emptyPhases();
  const prevByKey = new Map(prev.tables.map((t) => [t.key, t]));
  const nextByKey = new Map(next.tables.map((t) => [t.key, t]));
  diffDroppedTables(
    prev.tables.filter((t) => !nextByKey.has(t.key)),
    out,
  );
  for (const n of next.tables) {
    const p = prevByKey.get(n.key);
    if (p === undefined) diffNewTable(n, out);
    else diffTable(p, n, renames.get(n.key) ?? new Map<string, string>(), out);
  }

  const prevSeqs = new Set(prev.sequences);
  const nextSeqs = new Set(next.sequences);
  const createSequences: Statement[] = next.sequences.filter((s) => !prevSeqs.has(s)).map((name) => ({ type: "create_sequence", name }));
  const dropSequences: Statement[] = prev.sequences.filter((s) => !nextSeqs.has(s)).map((name) => ({ type: "drop_sequence", name }));

  return [
    ...out.dropConstraints,
    ...out.dropIndexes,
    ...out.dropTables,
    ...out.renameTables,
    ...out.renameColumns,
    ...out.renameConstraints,
    ...out.dropColumns,
    ...createSequences,
    ...out.createTables,
    ...out.addColumns,
    ...out.alterColumns,
    ...out.addChecks,
    ...out.addForeignKeys,
    ...out.createIndexes,
    ...dropSequences,
  ];
}

/** The statements of a diff, by the phase of diffSchemas' order they belong to. */
interface Phases {
  dropConstraints: Statement[];
  dropIndexes: Statement[];
  dropTables: Statement[];
  renameTables: Statement[];
  renameColumns: Statement[];
  renameConstraints: Statement[];
  dropColumns: Statement[];
  createTables: Statement[];
  addColumns: Statement[];
  alterColumns: Statement[];
  addChecks: Statement[];
  addForeignKeys: Statement[];
  createIndexes: Statement[];
}

function emptyPhases(): Phases {
  return {
    dropConstraints: [],
    dropIndexes: [],
    dropTables: [],
    renameTables: [],
    renameColumns: [],
    renameConstraints: [],
    dropColumns: [],
    createTables: [],
    addColumns: [],
    alterColumns: [],
    addChecks: [],
    addForeignKeys: [],
    createIndexes: [],
  };
}

/** Tables that disappear. Foreign keys between two of them go first, so the drop order is free. */
function diffDroppedTables(dropped: readonly TableModel[], out: Phases): void {
  const droppedKeys = new Set(dropped.map((t) => t.key));
  for (const t of dropped) {
    for (const fk of t.foreignKeys) {
      if (droppedKeys.has(fk.refKey)) out.dropConstraints.push({ type: "drop_foreign_key", table: t.name, name: fk.name });
    }
    out.dropTables.push({ type: "drop_table", table: t.name });
  }
}

/** A table that is new: created whole, its constraints and indexes added after every table exists. */
function diffNewTable(n: TableModel, out: Phases): void {
  out.createTables.push({ type: "create_table", table: n.name, key: n.key, columns: n.columns });
  out.addChecks.push(...addCheckStatements(n, n.checks, () => false));
  for (const fk of n.foreignKeys) out.addForeignKeys.push({ type: "add_foreign_key", table: n.name, foreignKey: fk });
  for (const index of n.indexes) out.createIndexes.push({ type: "create_index", table: n.name, index });
}

/** A table in both models: its name, then its columns, then what hangs on them. */
function diffTable(p: TableModel, n: TableModel, renames: ReadonlyMap<string, string>, out: Phases): void {
  if (p.name !== n.name) diffTableName(p, n, out);
  const cols = diffColumns(p, n, renames, out);
  diffChecks(p, n, cols, out);
  diffForeignKeys(p, n, cols, out);
  diffIndexes(p, n, cols, out);
}

function diffTableName(p: TableModel, n: TableModel, out: Phases): void {
  out.renameTables.push({ type: "rename_table", from: p.name, to: n.name });
  // PostgreSQL names the primary key after the table; follow the rename so a migrated database
  // matches one built from schema.sql (names PostgreSQL would truncate are left alone).
  const [fromPk, toPk] = [`${p.name}_pkey`, `${n.name}_pkey`];
  if (Buffer.byteLength(fromPk) <= MAX_IDENTIFIER_BYTES && Buffer.byteLength(toPk) <= MAX_IDENTIFIER_BYTES) {
    out.renameConstraints.push({ type: "rename_constraint", table: n.name, from: fromPk, to: toPk });
  }
}

/** How the columns of one table map across the diff, for its constraints and indexes. */
interface ColumnFate {
  /** The new name of an old column; null when it is dropped. */
  newName: (col: string) => string | null;
  /** Whether a (new) column existed before, under this name or another. */
  existedBefore: (col: string) => boolean;
  /** New names of the surviving columns whose type changed. */
  typeChanged: ReadonlySet<string>;
}

/** Columns, matched by name or through `renamed_from`: renamed, dropped, added or altered. */
function diffColumns(p: TableModel, n: TableModel, renames: ReadonlyMap<string, string>, out: Phases): ColumnFate {
  // Old name -> new name for every column that survives.
  const prevCols = columnMap(p);
  const nextCols = columnMap(n);
  const survivors = new Map<string, string>();
  for (const c of p.columns) if (nextCols.has(c.name)) survivors.set(c.name, c.name);
  for (const [to, from] of renames) {
    if (prevCols.has(from) && !prevCols.has(to) && !nextCols.has(from) && nextCols.has(to)) {
      survivors.set(from, to);
      out.renameColumns.push({ type: "rename_column", table: n.name, from, to });
    }
  }
  const kept = new Set(survivors.values());
  for (const c of p.columns) {
    if (!survivors.has(c.name)) out.dropColumns.push({ type: "drop_column", table: n.name, column: c.name });
  }
  const typeChanged = new Set<string>();
  for (const c of n.columns) {
    if (!kept.has(c.name)) {
      out.addColumns.push({ type: "add_column", table: n.name, column: c });
      continue;
    }
    const from = [...survivors].find(([, to]) => to === c.name)?.[0] ?? c.name;
    const old = prevCols.get(from);
    if (old === undefined) continue;
    if (old.type !== c.type) typeChanged.add(c.name);
    out.alterColumns.push(...alterColumn(n.name, old, c));
  }
  return { newName: (col) => survivors.get(col) ?? null, existedBefore: (col) => kept.has(col), typeChanged };
}

/** Checks, keyed by the (new) column and kind. */
function diffChecks(p: TableModel, n: TableModel, cols: ColumnFate, out: Phases): void {
  const nextChecks = new Map(n.checks.map((c) => [`${c.column}:${c.kind}`, c]));
  const keptChecks = new Set<string>();
  for (const c of p.checks) {
    const col = cols.newName(c.column);
    if (col === null) continue; // dropped with its column
    const key = `${col}:${c.kind}`;
    const want = nextChecks.get(key);
    if (want !== undefined && !cols.typeChanged.has(col) && sameValue(c, want)) {
      keptChecks.add(key);
      if (c.name !== want.name) out.renameConstraints.push({ type: "rename_constraint", table: n.name, from: c.name, to: want.name });
    } else {
      out.dropConstraints.push({ type: "drop_check", table: p.name, name: c.name });
    }
  }
  const prevChecks = new Map(p.checks.map((c) => [`${cols.newName(c.column) ?? ""}:${c.kind}`, c]));
  out.addChecks.push(
    ...addCheckStatements(
      n,
      n.checks.filter((c) => !keptChecks.has(`${c.column}:${c.kind}`)),
      (c) => cols.existedBefore(c.column) && !relaxes(prevChecks.get(`${c.column}:${c.kind}`), c),
    ),
  );
}

/** Foreign keys, keyed by the (new) column. A renamed target table keeps its constraints. */
function diffForeignKeys(p: TableModel, n: TableModel, cols: ColumnFate, out: Phases): void {
  const nextFks = new Map(n.foreignKeys.map((f) => [f.column, f]));
  const keptFks = new Set<string>();
  for (const f of p.foreignKeys) {
    const col = cols.newName(f.column);
    if (col === null) {
      // Its column goes later, but the table it references may go first: drop the key now.
      out.dropConstraints.push({ type: "drop_foreign_key", table: p.name, name: f.name });
      continue;
    }
    const want = nextFks.get(col);
    if (want !== undefined && !cols.typeChanged.has(col) && sameForeignKey(f, want)) {
      keptFks.add(col);
      if (f.name !== want.name) out.renameConstraints.push({ type: "rename_constraint", table: n.name, from: f.name, to: want.name });
    } else {
      out.dropConstraints.push({ type: "drop_foreign_key", table: p.name, name: f.name });
    }
  }
  for (const f of n.foreignKeys) {
    if (!keptFks.has(f.column)) out.addForeignKeys.push({ type: "add_foreign_key", table: n.name, foreignKey: f });
  }
}

/** Indexes, keyed by uniqueness and (new) columns. PostgreSQL rebuilds them on a type change. */
function diffIndexes(p: TableModel, n: TableModel, cols: ColumnFate, out: Phases): void {
  const indexKey = (i: IndexModel, names: readonly string[]): string => `${i.unique ? "u" : "i"}:${names.join(",")}`;
  const nextIndexes = new Map(n.indexes.map((i) => [indexKey(i, i.columns), i]));
  const keptIndexes = new Set<string>();
  for (const i of p.indexes) {
    const names = i.columns.map(cols.newName);
    if (names.some((c) => c === null)) continue;
    const key = indexKey(i, names as string[]);
    const want = nextIndexes.get(key);
    if (want !== undefined) {
      keptIndexes.add(key);
      if (i.name !== want.name) out.renameConstraints.push({ type: "rename_index", from: i.name, to: want.name });
    } else {
      out.dropIndexes.push({ type: "drop_index", name: i.name });
    }
  }
  for (const i of n.indexes) {
    if (!keptIndexes.has(indexKey(i, i.columns))) out.createIndexes.push({ type: "create_index", table: n.name, index: i });
  }
}

/**
 * Changes to one surviving column. A type change drops the old default first (PostgreSQL would
 * try to cast it) and sets the new one after; NOT NULL on a column with a default fills NULLs with it.
 */
function alterColumn(table: string, old: ColumnModel, c: ColumnModel): Statement[] {
  const out: Statement[] = [];
  const typeChanged = old.type !== c.type;
  if (typeChanged && old.default !== null) out.push({ type: "drop_default", table, column: c.name });
  if (typeChanged) out.push({ type: "alter_column_type", table, column: c.name, from: old.type, to: c.type });
  if (c.default !== null && (typeChanged || old.default !== c.default)) {
    out.push({ type: "set_default", table, column: c.name, default: c.default });
  } else if (c.default === null && old.default !== null && !typeChanged) {
    out.push({ type: "drop_default", table, column: c.name });
  }
  if (!c.primaryKey && old.notNull && !c.notNull) out.push({ type: "drop_not_null", table, column: c.name });
  if (!c.primaryKey && !old.notNull && c.notNull) out.push({ type: "set_not_null", table, column: c.name, fill: c.default });
  return out;
}

function addCheckStatements(t: TableModel, checks: readonly CheckModel[], mayRejectRows: (c: CheckModel) => boolean): Statement[] {
  const types = new Map(t.columns.map((c) => [c.name, c.type]));
  return checks.map((check) => ({
    type: "add_check",
    table: t.name,
    check,
    columnType: types.get(check.column) ?? "TEXT",
    mayRejectRows: mayRejectRows(check),
  }));
}

/** Same rule; enum order does not matter to PostgreSQL's IN. */
function sameValue(a: CheckModel, b: CheckModel): boolean {
  if (Array.isArray(a.value) && Array.isArray(b.value)) {
    const sa = new Set(a.value.map((v) => JSON.stringify(v)));
    return a.value.length === b.value.length && b.value.every((v) => sa.has(JSON.stringify(v)));
  }
  return a.value === b.value;
}

/** Whether `next` accepts every value `prev` accepted, so existing rows cannot violate it. */
function relaxes(prev: CheckModel | undefined, next: CheckModel): boolean {
  if (prev === undefined || prev.kind !== next.kind) return false;
  const pv = prev.value;
  const nv = next.value;
  switch (next.kind) {
    case "enum": {
      if (!Array.isArray(pv) || !Array.isArray(nv)) return false;
      const allowed = new Set(nv.map((v) => JSON.stringify(v)));
      return pv.every((v) => allowed.has(JSON.stringify(v)));
    }
    case "min":
    case "min_length":
      return typeof pv === "number" && typeof nv === "number" && nv <= pv;
    case "max":
    case "max_length":
      return typeof pv === "number" && typeof nv === "number" && nv >= pv;
    case "pattern":
      return pv === nv;
    default:
      return false;
  }
}

function sameForeignKey(a: ForeignKeyModel, b: ForeignKeyModel): boolean {
  return a.refKey === b.refKey && a.onDelete === b.onDelete;
}
