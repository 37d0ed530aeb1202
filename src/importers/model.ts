/**
 * The neutral model every importer feeds (drizzle-kit `pull` style): tables, fields, enums and
 * relations as the source states them, before any contract naming. Adapters (OpenAPI, SQL, Prisma,
 * the code-base extractor) only parse; naming, type mapping, relation inference and contract
 * printing are shared and live beside this file.
 */

import type { FieldType } from "../compiler/ir.js";

/** Field types of the contract language (the compiler's own list). */
export type ContractType = FieldType;

/** Where something was read: a file and, when the parser knows it, a line and column or a JSON pointer. */
export interface SourceLocation {
  file: string;
  line?: number;
  column?: number;
  /** JSON pointer inside the file (OpenAPI). */
  pointer?: string;
}

export interface FieldConstraints {
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/** A foreign key or an object reference, by source table name (and column when the source says). */
export interface ForeignKey {
  columns: string[];
  table: string;
  targetColumns: string[];
  /** The constraint's name, when the source gives one (a later DROP CONSTRAINT names it). */
  name?: string;
  /** What the source does on deleting the referenced row; undefined when it does not say. */
  onDelete?: OnDelete;
  /** The source's own spelling of it ("SET DEFAULT", "NoAction"), for notes. */
  onDeleteSource?: string;
}

export type OnDelete = "restrict" | "cascade" | "set_null";

export interface ImportField {
  /** Name as written in the source. */
  name: string;
  type: ContractType;
  /** The source's own type, kept for notes ("jsonb", "Decimal", "CharField"). */
  sourceType?: string;
  required?: boolean;
  default?: unknown;
  enum?: (string | number)[];
  format?: string;
  itemsType?: ContractType;
  description?: string;
  constraints?: FieldConstraints;
  unique?: boolean;
  /** Filled by the database or the ORM, never by clients. */
  generated?: "now" | "now_on_update" | "uuid" | "increment";
  /** An array of records of another table (OpenAPI `items: {$ref}`): a relation, not a column. */
  arrayOf?: string;
  location?: SourceLocation;
}

export interface ImportTable {
  /** Name as written in the source (a table, a schema or a model class). */
  name: string;
  /** Table name in the database when the source names one (`@@map`, `__tablename__`, `db_table`). */
  tableName?: string;
  description?: string;
  fields: ImportField[];
  primaryKey: string[];
  foreignKeys: ForeignKey[];
  location: SourceLocation;
}

/** An API operation (OpenAPI path or a route in a code base), tied to a table when it can be. */
export interface ImportOperation {
  method: string;
  path: string;
  summary?: string;
  /** Source name of the table this operation reads or writes, when known. */
  table?: string;
  location: SourceLocation;
}

/** The kinds of fact of an input that an import carries, changes or leaves out (issue 38). */
export type FactKind =
  | "table"
  | "column"
  | "type"
  | "length"
  | "bounds"
  | "nullability"
  | "default"
  | "enum"
  | "unique"
  | "primary_key"
  | "reference"
  | "on_delete"
  | "check"
  | "soft_delete"
  | "operation";

export type NoteKind = "skipped" | "changed" | "error";

/** Something the user must know: an item left out, renamed, or turned into something else, and why. */
export interface ImportNote {
  kind: NoteKind;
  subject: string;
  reason: string;
  location?: SourceLocation;
  /** Which fact of the input the note is about, for the fidelity report (src/importers/fidelity.ts). */
  fact?: FactKind;
}

export interface ImportModel {
  format: string;
  /** Files read, in order. */
  files: string[];
  tables: ImportTable[];
  operations: ImportOperation[];
  notes: ImportNote[];
}

/** An input the user must fix: one message naming the file and place. Nothing is written. */
export class ImportError extends Error {
  constructor(
    message: string,
    readonly location?: SourceLocation,
  ) {
    super(location ? `${formatLocation(location)}: ${message}` : message);
  }
}

export function formatLocation(l: SourceLocation): string {
  let s = l.file;
  if (l.line !== undefined) s += `:${l.line}${l.column !== undefined ? `:${l.column}` : ""}`;
  if (l.pointer !== undefined) s += ` (at ${l.pointer === "" ? "#" : `#${l.pointer}`})`;
  return s;
}
