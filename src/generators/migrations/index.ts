import type { DomainIR } from "../../compiler/index.js";
import { sqlHeader } from "../header.js";
import { convertStatements, warningOf } from "../postgres/convertor.js";
import { fullSchemaOf, schemaModelOf } from "../postgres/index.js";
import type { Statement } from "../postgres/statements.js";
import { MIGRATIONS_DIR, SNAPSHOT_PATH } from "../postgres/types.js";
import type { GeneratedFile, Generator, GeneratorInput } from "../types.js";
import { type ColumnRenames, diffSchemas } from "./diff.js";
import { parseSnapshot, serializeSnapshot } from "./snapshot.js";

export { type ColumnRenames, diffSchemas } from "./diff.js";
export { parseSnapshot, SNAPSHOT_VERSION, type Snapshot, SnapshotError, serializeSnapshot } from "./snapshot.js";

/** `0001_initial.sql`: four digits, then a slug. The runner applies them in name order. */
const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;
const MAX_SLUG = 60;

/**
 * The `migrations` target. It reads the previous snapshot and the names of the migrations already
 * written, diffs the snapshot against the schema of the current contracts and, when anything
 * changed, returns one new numbered migration and the updated snapshot. With no change it returns
 * the snapshot as it is on disk, so nothing is written. Past migrations are history, not output:
 * they are never returned again, and each is marked `permanent` when written so the writer never
 * takes it for stale output.
 *
 * No snapshot yet: the first migration is the full schema, idempotent like schema.sql, so it is
 * also safe on a database that schema.sql already built.
 */
export function generateMigrations({ ir, existing }: GeneratorInput): GeneratedFile[] {
  let lastNumber = 0;
  for (const path of existing.keys()) {
    if (!path.startsWith(MIGRATIONS_DIR)) continue;
    const m = MIGRATION_FILE.exec(path.slice(MIGRATIONS_DIR.length));
    if (m !== null) lastNumber = Math.max(lastNumber, Number(m[1]));
  }
  const snapshotText = existing.get(SNAPSHOT_PATH);
  const next = schemaModelOf(ir);

  let statements: readonly Statement[];
  let sql: string;
  let slug: string;
  let from: string;
  if (snapshotText === undefined) {
    // The full schema, as schema.sql has it: rendered once per IR for both targets.
    ({ statements, sql } = fullSchemaOf(ir));
    slug = "initial";
    from = "an empty database (every statement is idempotent)";
  } else {
    const snapshot = parseSnapshot(snapshotText);
    statements = diffSchemas(snapshot.schema, next, columnRenames(ir));
    if (statements.length === 0) return [{ path: SNAPSHOT_PATH, content: snapshotText }];
    sql = convertStatements(statements);
    slug = migrationSlug(statements);
    from = `the schema after ${snapshot.migration}`;
  }

  const name = `${String(lastNumber + 1).padStart(4, "0")}_${slug}`;
  const content = `${sqlHeader()}-- Migration ${name} of domain ${ir.domain}, from ${from}.\n-- Applied once, inside a transaction, by the app's migration runner.\n\n${sql}`;
  const warnings = statements.flatMap((st) => warningOf(st) ?? []);
  return [
    { path: `${MIGRATIONS_DIR}${name}.sql`, content, permanent: true, ...(warnings.length > 0 ? { warnings } : {}) },
    { path: SNAPSHOT_PATH, content: serializeSnapshot({ migration: name, schema: next }) },
  ];
}

/** `renamed_from` of every field, by table key (the entity FQN). */
export function columnRenames(ir: DomainIR): ColumnRenames {
  const out = new Map<string, Map<string, string>>();
  for (const e of ir.entities) {
    const m = new Map<string, string>();
    for (const f of e.fields) if (f.renamedFrom !== null && f.renamedFrom !== f.name) m.set(f.name, f.renamedFrom);
    if (m.size > 0) out.set(e.fqn, m);
  }
  return out;
}

/**
 * A file-name slug that says what the migration does, from its statements in order: the first two
 * notable changes, and `and_more` when there are others (`add_tickets_severity`,
 * `drop_notes_and_rename_support_agents_to_agents_and_more`).
 */
export function migrationSlug(statements: readonly Statement[]): string {
  // Each part is a list of whole words: a verb, the names (a name keeps its own underscores), `to`.
  const parts: string[][] = [];
  const add = (...words: string[]): void => {
    const clean = words.map((w) => w.replace(/[^a-z0-9_]/g, "_"));
    if (!parts.some((p) => p.join(" ") === clean.join(" "))) parts.push(clean);
  };
  for (const st of statements) {
    switch (st.type) {
      case "create_table":
        add("create", st.table);
        break;
      case "drop_table":
        add("drop", st.table);
        break;
      case "rename_table":
        add("rename", st.from, "to", st.to);
        break;
      case "add_column":
        add("add", st.table, st.column.name);
        break;
      case "drop_column":
        add("drop", st.table, st.column);
        break;
      case "rename_column":
        add("rename", st.table, st.from, "to", st.to);
        break;
      case "alter_column_type":
        add("alter", st.table, st.column, "type");
        break;
      default:
        break;
    }
  }
  // Changes with no headline of their own (checks, defaults, indexes) name their tables.
  if (parts.length === 0) {
    for (const st of statements)
      if ("table" in st) add("alter", st.table);
      else add("alter", "schema");
  }
  // Too long a name drops whole words from its end, never part of a name, and never ends on a
  // dangling `to`: first the second change, then the last words of the first one.
  const more = parts.length > 2 ? ["and", "more"] : [];
  const candidates: string[][] = [];
  const [first = [], second] = parts;
  if (second) candidates.push([...first, "and", ...second, ...more]);
  const rest = second ? ["and", "more"] : more;
  for (let n = first.length; n >= 1; n--) {
    const head = first.slice(0, n);
    if (head[head.length - 1] === "to") continue;
    candidates.push([...head, ...rest]);
  }
  for (const words of candidates) {
    const slug = words.join("_");
    if (slug.length <= MAX_SLUG) return slug;
  }
  // A single name longer than the limit: its first characters, as a last resort.
  return (first[0] ?? "change").slice(0, MAX_SLUG);
}

export const migrationsGenerator: Generator = {
  target: "migrations",
  description: "backend/db/migrations/NNNN_<slug>.sql from the difference with the last snapshot",
  reads: () => [MIGRATIONS_DIR],
  generate: generateMigrations,
};
