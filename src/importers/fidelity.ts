import { isDeepStrictEqual } from "node:util";
import { kebabCase, pluralize } from "../compiler/naming.js";
import type { ConversionTrace, PlannedContract, TableTrace } from "./convert.js";
import type { FactKind, ForeignKey, ImportField, ImportModel, ImportNote, ImportOperation, ImportTable, SourceLocation } from "./model.js";

/**
 * The fidelity report of an import (issue 38): every fact the adapter read from the input — a
 * table, each column's type, length, bounds, nullability, default, enum and uniqueness, a key, a
 * reference and its delete rule, an operation — is `carried` into the written contracts,
 * `changed` or `left_out`, the last two with the reason of the note that says so. A fact whose
 * value differs between the model and the contracts with no note naming it is `silent`: a bug of
 * the import, which the report surfaces instead of hiding.
 *
 * Notes name what they are about by `subject` and `fact`. Subjects are the source's names
 * (`<table>.<column>`, `<table>`, `<METHOD> <path>`); the shared conversion still names some by
 * the contract (`<Entity>.<field>`), so both spellings are accepted.
 */

export type FactStatus = "carried" | "changed" | "left_out" | "silent";

export interface FidelityFact {
  subject: string;
  fact: FactKind;
  status: FactStatus;
  /** The note's reason (changed, left out), or what differs (silent). */
  reason?: string;
  location?: SourceLocation;
}

export interface FidelityReport {
  carried: number;
  changed: number;
  left_out: number;
  silent: number;
  facts: FidelityFact[];
}

type FieldDef = Record<string, unknown>;

/** The facts of `model` against the contracts written from it, judged by `notes`. */
export function fidelityReport(
  model: ImportModel,
  contracts: readonly PlannedContract[],
  notes: readonly ImportNote[],
  trace: ConversionTrace,
): FidelityReport {
  const ledger = new Ledger(notes);
  const entities = new Map(contracts.filter((c) => c.kind === "Entity").map((c) => [c.name, c]));
  const entityOfTable = entitiesOfTables(model, trace);
  for (const t of model.tables) tableFacts(t, trace[t.name], entities, entityOfTable, ledger);
  for (const op of model.operations) operationFact(op, contracts, entityOfTable, ledger.same, ledger.differs);
  const facts = [...ledger.facts, ...ledger.unused()];
  const count = (s: FactStatus): number => facts.filter((f) => f.status === s).length;
  return { carried: count("carried"), changed: count("changed"), left_out: count("left_out"), silent: count("silent"), facts };
}

/** The facts judged so far, and which notes judged them. */
class Ledger {
  readonly facts: FidelityFact[] = [];
  private readonly used = new Set<ImportNote>();

  constructor(private readonly notes: readonly ImportNote[]) {}

  private noteFor(fact: FactKind, subjects: readonly string[]): ImportNote | undefined {
    const n = this.notes.find((x) => x.fact === fact && subjects.includes(x.subject));
    if (n) this.used.add(n);
    return n;
  }

  /** A fact that differs (or is missing): a note decides changed/left out, else it is silent. */
  readonly differs: Differs = (fact, subjects, detail, location) => {
    const n = this.noteFor(fact, subjects);
    const f: FidelityFact = n
      ? { subject: subjects[0] as string, fact, status: statusOf(n), reason: n.reason }
      : { subject: subjects[0] as string, fact, status: "silent", reason: detail };
    const at = n?.location ?? location;
    if (at) f.location = at;
    this.facts.push(f);
  };

  readonly same: Same = (fact, subjects) => {
    // A note can still say the fact changed though the values compare equal (a native type read as its contract type).
    const n = this.noteFor(fact, subjects);
    this.facts.push(
      n
        ? { subject: subjects[0] as string, fact, status: statusOf(n), reason: n.reason }
        : { subject: subjects[0] as string, fact, status: "carried" },
    );
  };

  readonly check: Check = (fact, subjects, a, b, location) => {
    if (isDeepStrictEqual(a, b)) this.same(fact, subjects);
    else this.differs(fact, subjects, `input ${show(a)}, contract ${show(b)}`, location);
  };

  /**
   * What the notes say of facts the model does not hold (a CHECK the adapter could not read, a
   * statement it skipped): listed as the notes state them.
   */
  unused(): FidelityFact[] {
    const out: FidelityFact[] = [];
    for (const n of this.notes) {
      if (n.fact === undefined || this.used.has(n)) continue;
      const f: FidelityFact = { subject: n.subject, fact: n.fact, status: statusOf(n), reason: n.reason };
      if (n.location) f.location = n.location;
      out.push(f);
    }
    return out;
  }
}

/** The entity written for each table, by the table's name and its SQL name, lower-cased. */
function entitiesOfTables(model: ImportModel, trace: ConversionTrace): Map<string, string> {
  const entityOfTable = new Map<string, string>();
  for (const t of model.tables) {
    const tr = trace[t.name];
    if (tr) {
      entityOfTable.set(t.name.toLowerCase(), tr.entity);
      if (t.tableName) entityOfTable.set(t.tableName.toLowerCase(), tr.entity);
    }
  }
  return entityOfTable;
}

/** A table's facts: the table itself, its key, each column's facts, each foreign key. */
function tableFacts(
  t: ImportTable,
  tr: TableTrace | undefined,
  entities: ReadonlyMap<string, PlannedContract>,
  entityOfTable: ReadonlyMap<string, string>,
  ledger: Ledger,
): void {
  const { same, differs, check } = ledger;
  const entity = tr ? entities.get(tr.entity) : undefined;
  const tableSubjects = tr ? [t.name, tr.entity] : [t.name];
  if (!tr || !entity) {
    differs("table", tableSubjects, "no entity written for it", t.location);
    return;
  }
  same("table", tableSubjects);
  const spec = entity.data.spec as { fields?: Record<string, FieldDef> };
  const fields = spec.fields ?? {};
  tablePrimaryKey(t, tr, tableSubjects, same, differs);
  for (const f of t.fields) {
    const name = tr.columns[f.name] ?? f.name;
    const subjects = [`${t.name}.${f.name}`, `${tr.entity}.${name}`, `${tr.entity}.${f.name}`];
    const at = f.location ?? t.location;
    const def = fields[name];
    if (!def) {
      if (tr.absorbed[f.name] !== undefined) same("column", subjects);
      else differs("column", subjects, "no field written for it", at);
      continue;
    }
    same("column", subjects);
    columnFacts(f, def, t, subjects, at, check, same, differs);
  }
  for (const fk of t.foreignKeys) foreignKeyFacts(t, fk, tr, fields, entityOfTable, ledger);
}

/** A foreign key is carried when its column's field references the entity of the key's table; then its delete rule. */
function foreignKeyFacts(
  t: ImportTable,
  fk: ForeignKey,
  tr: TableTrace,
  fields: Record<string, FieldDef>,
  entityOfTable: ReadonlyMap<string, string>,
  { same, differs, check }: Ledger,
): void {
  const names = fk.columns.map((c) => tr.columns[c] ?? c);
  const subjects = [`${t.name}.${fk.columns.join(", ")}`, `${tr.entity}.${names.join(", ")}`, `${tr.entity}.(${names.join(", ")})`];
  const def = names.length === 1 ? fields[names[0] as string] : undefined;
  const refs = def?.references as { entity?: string; on_delete?: string } | undefined;
  const target = entityOfTable.get(fk.table.toLowerCase());
  const written = refs?.entity?.split("/").pop();
  if (!refs || written !== target) {
    differs(
      "reference",
      subjects,
      `references ${fk.table}; the contract ${refs ? `references ${written}` : "has no reference"}`,
      t.location,
    );
    return;
  }
  same("reference", subjects);
  if (fk.onDelete !== undefined) {
    const actual = refs.on_delete ?? (def?.required === true ? "restrict" : "set_null");
    check("on_delete", subjects, fk.onDelete, actual, t.location);
  }
}

type Same = (fact: FactKind, subjects: readonly string[]) => void;
type Differs = (fact: FactKind, subjects: readonly string[], detail: string, location?: SourceLocation) => void;
type Check = (fact: FactKind, subjects: readonly string[], a: unknown, b: unknown, location?: SourceLocation) => void;

function statusOf(n: ImportNote): FactStatus {
  return n.kind === "changed" ? "changed" : "left_out";
}

function show(v: unknown): string {
  return v === undefined ? "none" : JSON.stringify(v);
}

/** A single `id` key is the contract's implicit id; any other key is a change a note must name. */
function tablePrimaryKey(t: ImportTable, tr: TableTrace, subjects: readonly string[], same: Same, differs: Differs): void {
  if (t.primaryKey.length === 0) return;
  const key = t.primaryKey.map((c) => tr.columns[c] ?? c);
  if (key.length === 1 && key[0] === "id") same("primary_key", subjects);
  else
    differs(
      "primary_key",
      [...subjects, `${tr.entity}.${key.join(", ")}`],
      `key (${t.primaryKey.join(", ")}) is not the contract's id`,
      t.location,
    );
}

function columnFacts(
  f: ImportField,
  def: FieldDef,
  t: ImportTable,
  subjects: readonly string[],
  at: SourceLocation,
  check: Check,
  same: Same,
  differs: Differs,
): void {
  const isRef = def.references !== undefined;
  // A foreign key's type is the reference's (a uuid): the reference fact judges it.
  if (isRef) same("type", subjects);
  else check("type", subjects, f.type, def.type, at);
  const c = f.constraints ?? {};
  const d = (def.constraints ?? {}) as Record<string, unknown>;
  if (!isRef) {
    if (c.maxLength !== undefined || c.minLength !== undefined || d.maxLength !== undefined || d.minLength !== undefined)
      check("length", subjects, [c.minLength ?? 0, c.maxLength], [d.minLength ?? 0, d.maxLength], at);
    if (c.min !== undefined || c.max !== undefined || d.min !== undefined || d.max !== undefined)
      check("bounds", subjects, [c.min, c.max], [d.min, d.max], at);
  }
  const key = t.primaryKey.includes(f.name);
  // Computed times are NOT NULL columns though the field is not required (the app fills them).
  const notNull = def.required === true || def.computed === "now" || def.computed === "now_on_update";
  check("nullability", subjects, f.required === true || key, notNull, at);
  if (f.generated !== undefined && f.generated !== "increment") check("default", subjects, f.generated, def.computed, at);
  else if (f.generated === "increment") differs("default", subjects, "auto-increment is not carried", at);
  else if (f.default !== undefined || def.default !== undefined) check("default", subjects, f.default, def.default, at);
  if (!isRef && (f.enum !== undefined || def.enum !== undefined))
    check("enum", subjects, f.enum ? [...new Set(f.enum)] : undefined, def.enum, at);
  if (f.unique) differs("unique", subjects, "unique is not in the contract", at);
}

/** An operation is carried when a Route serves its method on its path (parameter names aside). */
function operationFact(
  op: ImportOperation,
  contracts: readonly PlannedContract[],
  entityOfTable: ReadonlyMap<string, string>,
  same: Same,
  differs: Differs,
): void {
  const subjects = [`${op.method.toUpperCase()} ${op.path}`];
  const shape = (p: string): string => p.replace(/\/+$/, "").replace(/\{[^}]+\}/g, "{}") || "/";
  const wanted = shape(op.path);
  const entity = op.table ? entityOfTable.get(op.table.toLowerCase()) : undefined;
  for (const r of contracts.filter((c) => c.kind === "Route")) {
    const spec = r.data.spec as { base_path?: string; endpoints?: { method?: string; path?: string }[] };
    const base = spec.base_path ?? `/${kebabCase(pluralize(r.entity))}`;
    for (const e of spec.endpoints ?? []) {
      if (String(e.method).toUpperCase() !== op.method.toUpperCase()) continue;
      if (shape(`${base}${e.path === "/" ? "" : (e.path ?? "")}`) === wanted) {
        same("operation", subjects);
        return;
      }
    }
  }
  differs("operation", subjects, `no Route serves it${entity ? ` (entity ${entity})` : ""}`, op.location);
}

/** The report in the summary's words: counts, then every fact not carried, with its reason. */
export function fidelityLines(r: FidelityReport): string[] {
  const out = [`Fidelity: ${r.carried} carried, ${r.changed} changed, ${r.left_out} left out, ${r.silent} silent`];
  const label: Record<FactStatus, string> = { carried: "carried", changed: "changed", left_out: "left out", silent: "SILENT" };
  for (const f of r.facts) {
    if (f.status === "carried") continue;
    out.push(`  ${label[f.status]} ${f.fact} ${f.subject}: ${f.reason ?? ""}`);
  }
  return out;
}
