import { compareText } from "../../shared/text.js";
import type { FactKind, FieldConstraints, ImportField, ImportNote, ImportTable, SourceLocation } from "../model.js";
import { ImportError } from "../model.js";

/** A CHECK constraint reduced to what a contract can say; each dialect's reader builds these. */
export type Check =
  | { kind: "in"; column: string; values: (string | number)[] }
  | { kind: "compare"; column: string; op: string; value: number }
  | { kind: "length"; column: string; op: string; value: number }
  | { kind: "between"; column: string; low: number; high: number }
  | { kind: "and"; parts: Check[] }
  | { kind: "other"; text: string };

/**
 * The schema as statements build it up, shared by the PostgreSQL and MySQL readers: tables in
 * creation order, enum types, notes, and skipped statement kinds counted (one note per kind).
 */
export class SchemaState {
  private readonly byName = new Map<string, ImportTable>();
  private readonly enumTypes = new Map<string, string[]>();
  readonly notes: ImportNote[] = [];
  private readonly skipped = new Map<string, { count: number; first: SourceLocation }>();
  /** Domains (`CREATE DOMAIN year AS integer CHECK (VALUE >= 1901)`) by lower-case name: base type and CHECK expressions. */
  readonly domains = new Map<string, { rawType: string; checks: unknown[] }>();
  /** Partitions and inheriting tables by lower-case name, with their parent: their rows are the parent's. */
  readonly partitions = new Map<string, string>();

  tables(): ImportTable[] {
    return [...this.byName.values()];
  }

  finishNotes(): ImportNote[] {
    for (const [kind, s] of [...this.skipped].sort(([a], [b]) => compareText(a, b))) {
      this.notes.push({
        kind: "skipped",
        subject: `${kind} (${s.count} statement${s.count === 1 ? "" : "s"})`,
        reason: "not part of the data model",
        location: s.first,
      });
    }
    return this.notes;
  }

  skip(kind: string, at: SourceLocation): void {
    const s = this.skipped.get(kind);
    if (s) s.count++;
    else this.skipped.set(kind, { count: 1, first: at });
  }

  note(subject: string, reason: string, at: SourceLocation, kind: ImportNote["kind"] = "skipped", fact?: FactKind): void {
    const n: ImportNote = { kind, subject, reason, location: at };
    if (fact) n.fact = fact;
    this.notes.push(n);
  }

  addEnumType(name: string, values: string[]): void {
    this.enumTypes.set(name.toLowerCase(), values);
  }

  /** `ALTER TYPE ... ADD VALUE`: in place, so the fields of that type see it too. */
  addEnumValue(name: string, value: string): boolean {
    const values = this.enumTypes.get(name.toLowerCase());
    if (!values) return false;
    if (!values.includes(value)) values.push(value);
    return true;
  }

  renameEnumType(from: string, to: string): void {
    const values = this.enumTypes.get(from.toLowerCase());
    if (!values) return;
    this.enumTypes.delete(from.toLowerCase());
    this.enumTypes.set(to.toLowerCase(), values);
  }

  /** `ALTER TABLE a RENAME TO b`, foreign keys of the other tables following it. */
  renameTable(from: string, to: string): void {
    const t = this.byName.get(from.toLowerCase());
    if (!t) return;
    this.byName.delete(from.toLowerCase());
    t.name = to;
    this.byName.set(to.toLowerCase(), t);
    for (const other of this.byName.values())
      for (const fk of other.foreignKeys) if (fk.table.toLowerCase() === from.toLowerCase()) fk.table = to;
  }

  /** `ALTER TABLE t RENAME COLUMN a TO b`: the field, its key and its foreign keys, here and in the tables pointing at it. */
  renameColumn(t: ImportTable, from: string, to: string): void {
    const f = t.fields.find((x) => x.name === from);
    if (f) f.name = to;
    t.primaryKey = t.primaryKey.map((c) => (c === from ? to : c));
    for (const fk of t.foreignKeys) fk.columns = fk.columns.map((c) => (c === from ? to : c));
    for (const other of this.byName.values())
      for (const fk of other.foreignKeys)
        if (fk.table.toLowerCase() === t.name.toLowerCase()) fk.targetColumns = fk.targetColumns.map((c) => (c === from ? to : c));
  }

  enumType(name: string): string[] | undefined {
    return this.enumTypes.get(name.toLowerCase());
  }

  createTable(name: string, at: SourceLocation, ifNotExists: boolean): ImportTable | undefined {
    if (this.byName.has(name.toLowerCase())) {
      if (ifNotExists) return undefined;
      throw new ImportError(`table '${name}' is created twice`, at);
    }
    const t: ImportTable = { name, fields: [], primaryKey: [], foreignKeys: [], location: at };
    this.byName.set(name.toLowerCase(), t);
    return t;
  }

  table(name: string): ImportTable | undefined {
    return this.byName.get(name.toLowerCase());
  }

  dropTable(name: string): void {
    this.byName.delete(name.toLowerCase());
  }

  markUnique(t: ImportTable, columns: string[], at: SourceLocation): void {
    if (columns.length === 1) {
      const f = t.fields.find((x) => x.name === columns[0]);
      if (f) f.unique = true;
    } else
      this.note(
        `unique (${columns.join(", ")}) on ${t.name}`,
        "a unique constraint over several columns is not expressible in a contract",
        at,
        "skipped",
        "unique",
      );
  }

  index(t: ImportTable | undefined, tableName: string, name: string, columns: string[], unique: boolean, at: SourceLocation): void {
    if (columns.length > 1) {
      this.note(
        `index ${name} on ${t?.name ?? tableName} (${columns.join(", ")})`,
        `composite ${unique ? "unique " : ""}index is not expressible in a contract`,
        at,
      );
    } else if (unique && t) this.markUnique(t, columns, at);
  }

  applyCheck(t: ImportTable, check: Check, at: SourceLocation): void {
    const field = (name: string): ImportField | undefined => t.fields.find((f) => f.name === name);
    switch (check.kind) {
      case "and":
        for (const p of check.parts) this.applyCheck(t, p, at);
        return;
      case "in": {
        const f = field(check.column);
        if (f) {
          f.enum = check.values;
          return;
        }
        break;
      }
      case "compare": {
        const f = field(check.column);
        if (!f) break;
        f.constraints ??= {};
        const c: FieldConstraints = f.constraints;
        const step = f.type === "integer" ? 1 : 0;
        if (check.op === ">=" || (check.op === ">" && step)) c.min = check.op === ">" ? check.value + step : check.value;
        else if (check.op === "<=" || (check.op === "<" && step)) c.max = check.op === "<" ? check.value - step : check.value;
        else break;
        return;
      }
      case "between": {
        const f = field(check.column);
        if (!f) break;
        f.constraints = { ...f.constraints, min: check.low, max: check.high };
        return;
      }
      case "length": {
        const f = field(check.column);
        if (!f) break;
        f.constraints ??= {};
        const c: FieldConstraints = f.constraints;
        if (check.op === "<=" || check.op === "<") c.maxLength = check.op === "<" ? check.value - 1 : check.value;
        else if (check.op === ">=" || check.op === ">") c.minLength = check.op === ">" ? check.value + 1 : check.value;
        else break;
        return;
      }
      default:
        break;
    }
    this.note(`CHECK on ${t.name}`, `${describe(check)} is not expressible as enum, min/max or length`, at, "skipped", "check");
  }
}

function describe(c: Check): string {
  switch (c.kind) {
    case "other":
      return c.text;
    case "in":
      return `${c.column} IN (...)`;
    case "compare":
      return `${c.column} ${c.op} ${c.value}`;
    case "length":
      return `length(${c.column}) ${c.op} ${c.value}`;
    case "between":
      return `${c.column} BETWEEN ${c.low} AND ${c.high}`;
    case "and":
      return c.parts.map(describe).join(" AND ");
  }
}
