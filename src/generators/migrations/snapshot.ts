import { GENERATED_NOTICE } from "../header.js";
import type { SchemaModel, TableModel } from "../postgres/model.js";
import { SNAPSHOT_PATH } from "../postgres/types.js";

/**
 * The schema as the last migration left it (drizzle-kit's snapshot): the previous side of the next
 * diff. It is the schema model plus the name of the migration that produced it, stored as JSON with
 * a fixed key order, one column or constraint per line, so it diffs well in review.
 */
export const SNAPSHOT_VERSION = 1;

export interface Snapshot {
  /** The migration file (without `.sql`) that brings a database to this schema. */
  migration: string;
  schema: SchemaModel;
}

export function serializeSnapshot(snapshot: Snapshot): string {
  const tables = snapshot.schema.tables.map((t) =>
    [
      "    {",
      `      "key": ${JSON.stringify(t.key)},`,
      `      "name": ${JSON.stringify(t.name)},`,
      `      "columns": ${rows(t.columns.map((c) => ({ name: c.name, type: c.type, primaryKey: c.primaryKey, notNull: c.notNull, default: c.default })))},`,
      `      "checks": ${rows(t.checks.map((c) => ({ name: c.name, column: c.column, kind: c.kind, value: c.value })))},`,
      `      "foreignKeys": ${rows(t.foreignKeys.map((f) => ({ name: f.name, column: f.column, refKey: f.refKey, refTable: f.refTable, onDelete: f.onDelete })))},`,
      `      "indexes": ${rows(t.indexes.map((i) => ({ name: i.name, columns: i.columns, unique: i.unique })))}`,
      "    }",
    ].join("\n"),
  );
  return [
    "{",
    `  "@generated": ${JSON.stringify(GENERATED_NOTICE)},`,
    `  "version": ${SNAPSHOT_VERSION},`,
    `  "dialect": "postgresql",`,
    `  "migration": ${JSON.stringify(snapshot.migration)},`,
    `  "tables": [\n${tables.join(",\n")}\n  ],`,
    `  "sequences": ${JSON.stringify(snapshot.schema.sequences)}`,
    "}",
    "",
  ].join("\n");
}

/** A list of objects, one compact object per line: a changed column is a one-line diff in review. */
function rows(items: readonly object[]): string {
  if (items.length === 0) return "[]";
  return `[\n${items.map((x) => `        ${JSON.stringify(x)}`).join(",\n")}\n      ]`;
}

/** A snapshot that cannot be read: the user can fix it, or delete it to start over. */
export class SnapshotError extends Error {
  constructor(reason: string) {
    super(
      `${SNAPSHOT_PATH}: ${reason}. Restore it from version control, or delete it to start over with a full (idempotent) initial migration.`,
    );
    this.name = "SnapshotError";
  }
}

export function parseSnapshot(text: string): Snapshot {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new SnapshotError(`not valid JSON (${(e as Error).message})`);
  }
  if (!isRecord(doc)) throw new SnapshotError("not a JSON object");
  if (doc.version !== SNAPSHOT_VERSION) {
    throw new SnapshotError(`snapshot version ${JSON.stringify(doc.version)} is not supported (expected ${SNAPSHOT_VERSION})`);
  }
  if (typeof doc.migration !== "string") throw new SnapshotError("missing `migration`");
  if (!Array.isArray(doc.tables) || !Array.isArray(doc.sequences)) throw new SnapshotError("missing `tables` or `sequences`");
  const tables = doc.tables.map((t, i) => readTable(t, i));
  const sequences = doc.sequences.map((s) => {
    if (typeof s !== "string") throw new SnapshotError("`sequences` must hold names");
    return s;
  });
  return { migration: doc.migration, schema: { tables, sequences } };
}

/**
 * Checks the parts the diff relies on. The snapshot is our own output, so a light structural check
 * that turns a hand-edit gone wrong into a clear message is enough.
 */
function readTable(t: unknown, i: number): TableModel {
  const where = `tables[${i}]`;
  if (!isRecord(t) || typeof t.key !== "string" || typeof t.name !== "string") {
    throw new SnapshotError(`${where} needs \`key\` and \`name\``);
  }
  for (const field of ["columns", "checks", "foreignKeys", "indexes"] as const) {
    const list = t[field];
    if (!Array.isArray(list) || !list.every((x) => isRecord(x) && typeof x.name === "string")) {
      throw new SnapshotError(`${where}.${field} must be a list of named objects`);
    }
  }
  return t as unknown as TableModel;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
