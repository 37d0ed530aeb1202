import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { parse } from "yaml";
import type { FactKind, ImportNote } from "../../../src/importers/model.js";
import { snakeCase } from "../../../src/importers/naming.js";

/**
 * What the Prisma and code-base judges share: the contracts an import wrote, read back as plain
 * YAML (not through the importer's own model), and the rule for when a note excuses a difference.
 */

export interface JudgeResult {
  compared: number;
  silent: { subject: string; fact: FactKind; detail: string }[];
}

export interface ContractField {
  type?: string;
  required?: boolean;
  default?: unknown;
  enum?: unknown[];
  items_type?: string;
  computed?: string;
  constraints?: { maxLength?: number; minLength?: number; min?: number; max?: number; pattern?: string };
  references?: { entity?: string; on_delete?: string };
}

export interface ContractEntity {
  name: string;
  domain: string;
  table?: string;
  mixins: string[];
  fields: Record<string, ContractField>;
  /** The workflow an enum status became: its states and initial state. */
  workflow?: { states: string[]; initial?: string; field?: string };
}

/** The entities of a domain folder, with the workflow each one's state machine names. */
export function readEntities(domainDir: string): Map<string, ContractEntity> {
  const read = (rel: string): Record<string, unknown>[] => {
    const dir = join(domainDir, rel);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((f) => f.endsWith(".contract.yaml"))
      .sort()
      .map((f) => parse(readFileSync(join(dir, f), "utf8")) as Record<string, unknown>);
  };
  const workflows = new Map<string, { states: string[]; initial?: string; field?: string }>();
  for (const w of read("workflows")) {
    const meta = (w.metadata ?? {}) as { name?: string; domain?: string; description?: string };
    const spec = (w.spec ?? {}) as { states?: Record<string, unknown>; initial?: string };
    // "Lifecycle of task, from its 'stage' values": the field the workflow came from.
    const field = /from its '([^']+)' values/.exec(meta.description ?? "")?.[1];
    workflows.set(`workflow/${meta.domain}/${meta.name}`, {
      states: Object.keys(spec.states ?? {}),
      ...(spec.initial !== undefined ? { initial: spec.initial } : {}),
      ...(field !== undefined ? { field } : {}),
    });
  }
  const out = new Map<string, ContractEntity>();
  for (const e of read("entities")) {
    const meta = (e.metadata ?? {}) as { name: string; domain: string };
    const spec = (e.spec ?? {}) as { table?: string; mixins?: string[]; fields?: Record<string, ContractField>; state_machine?: string };
    const entity: ContractEntity = { name: meta.name, domain: meta.domain, mixins: spec.mixins ?? [], fields: spec.fields ?? {} };
    if (spec.table) entity.table = spec.table;
    const wf = spec.state_machine ? workflows.get(spec.state_machine) : undefined;
    if (wf) entity.workflow = wf;
    out.set(meta.name, entity);
  }
  return out;
}

/** Words a note's reason uses for a fact, for notes written before notes carried their fact. */
const FACT_WORDS: Record<FactKind, RegExp> = {
  table: /entit|table|model|view/i,
  column: /field|column/i,
  type: /type|becomes|read as|kept as|string|number|object/i,
  length: /length|char/i,
  bounds: /min|max|bound/i,
  nullability: /required|optional|null/i,
  default: /default|generated|computed|now\(|uuid|increment|sequence/i,
  enum: /enum|choice|value/i,
  unique: /unique/i,
  primary_key: /primary key|\bkey\b|\bid\b|join table/i,
  reference: /reference|relation|foreign|many-to-many|join/i,
  on_delete: /on.?delete|cascade|restrict|set null/i,
  check: /check|validator/i,
  soft_delete: /soft|delet/i,
  operation: /operation|route|endpoint/i,
};

/** A subject in the two spellings notes use: the source's `Model.field` and the contract's `entity.field`. */
const norm = (s: string): string => s.split(".").map(snakeCase).join(".");

/**
 * Whether a note excuses a difference of `fact` about `subjects` (the source spelling, the contract
 * spelling): same subject (either spelling, case and snake-case aside) and the same fact (or, for a
 * note without one, a reason in that fact's words). A note about the whole model excuses its fields.
 */
export function excused(notes: readonly ImportNote[], subjects: readonly string[], fact: FactKind): boolean {
  const wanted = new Set(subjects.flatMap((s) => [norm(s), norm(s.split(".")[0] as string)]));
  return notes.some((n) => {
    if (!wanted.has(norm(n.subject))) return false;
    const sameField = subjects.some((s) => norm(s) === norm(n.subject));
    // A model-level note only excuses when it is about that fact of the model itself.
    if (!sameField && n.fact !== fact && n.fact !== "table") return false;
    return n.fact !== undefined ? n.fact === fact || n.fact === "table" : FACT_WORDS[fact].test(n.reason);
  });
}

/** Counts each fact compared and records the differences no note names. */
export class Tally {
  readonly result: JudgeResult = { compared: 0, silent: [] };
  constructor(private readonly notes: readonly ImportNote[]) {}

  /** One fact: `same` when the contracts carry it as the input states it. */
  check(subjects: readonly string[], fact: FactKind, same: boolean, detail: () => string): void {
    this.result.compared++;
    if (same || excused(this.notes, subjects, fact)) return;
    this.result.silent.push({ subject: subjects[0] as string, fact, detail: detail() });
  }
}

export const sameValue = (a: unknown, b: unknown): boolean => isDeepStrictEqual(a, b);

/** Columns the contracts carry implicitly (every entity's id and timestamps) or through a stdlib mixin. */
export function implicitColumn(entity: ContractEntity, column: string): boolean {
  if (column === "created_at" || column === "updated_at") return true;
  if (["deleted_at", "deleted_by", "is_deleted"].includes(column)) return entity.mixins.includes("mixin/stdlib/soft_deletable");
  if (column === "created_by" || column === "updated_by") return entity.mixins.includes("mixin/stdlib/auditable");
  if (column === "tags") return entity.mixins.includes("mixin/stdlib/taggable");
  if (column === "number") return entity.mixins.includes("mixin/stdlib/identifiable");
  return false;
}
