import type { ContractType, ImportField, ImportTable, SourceLocation } from "../model.js";
import { generatedDefault, mapTypeName } from "../type-map.js";
import type { SchemaState } from "./sql-schema.js";

// What both dialects' readers share once a column is parsed; its own module so that sql.ts, which
// dispatches to the dialects, and the dialects themselves do not import each other.

/** A column of either dialect, once its parser has read it. */
export interface ColumnFacts {
  name: string;
  rawType: string;
  length?: number;
  isArray?: boolean;
  enumValues?: string[];
  notNull?: boolean;
  primaryKey?: boolean;
  unique?: boolean;
  autoIncrement?: boolean;
  /** `DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP`: the row's time of last change. */
  onUpdateNow?: boolean;
  comment?: string;
  /** A constant default, or the text of an expression default. */
  defaultValue?: { constant: string | number | boolean } | { expression: string } | { null: true };
}

/**
 * Native types a contract has no word for, read as a string (or text): binary data, network
 * addresses, time spans, search vectors. Said in a note, since the generated column is text.
 */
const NATIVE_ONLY = new Set([
  "bytea",
  "blob",
  "longblob",
  "mediumblob",
  "tinyblob",
  "binary",
  "varbinary",
  "inet",
  "cidr",
  "macaddr",
  "tsvector",
  "interval",
  "time",
  "timetz",
  "xml",
]);

/** Types, lengths, defaults: the same rules for both dialects. */
export function columnField(state: SchemaState, t: ImportTable, c: ColumnFacts, at: SourceLocation): ImportField {
  const rawType = c.rawType.toLowerCase();
  const f: ImportField = { name: c.name, type: "string", sourceType: rawType, location: at };
  const enumValues = c.enumValues ?? state.enumType(rawType);
  const mapped: ContractType | undefined = mapTypeName(rawType);
  if (c.isArray) {
    f.type = "array";
    f.itemsType = mapped === "text" ? "string" : enumValues ? "string" : (mapped ?? "string");
  } else if (enumValues) {
    f.enum = enumValues;
  } else if (mapped) {
    f.type = rawType === "tinyint" && c.length === 1 ? "boolean" : mapped;
  } else {
    state.note(`${t.name}.${c.name}`, `type ${rawType} has no contract type; read as string`, at, "changed", "type");
  }
  if (NATIVE_ONLY.has(rawType))
    state.note(
      `${t.name}.${c.name}`,
      `type ${rawType} has no contract type; stored as ${f.type === "text" ? "text" : "a string"}`,
      at,
      "changed",
      "type",
    );
  if (/serial$/.test(rawType) || c.autoIncrement) f.generated = "increment";
  if (c.length !== undefined && f.type === "string" && /char/.test(rawType)) f.constraints = { maxLength: c.length };
  if (c.notNull) f.required = true;
  if (c.primaryKey) t.primaryKey = [c.name];
  if (c.unique) f.unique = true;
  if (c.comment) f.description = c.comment;
  if (c.defaultValue) applyDefault(state, t, f, c.defaultValue, at, c.onUpdateNow === true);
  return f;
}

/**
 * A column default: a constant (a time written as text becomes ISO 8601; `'now'::date` is the
 * database's clock), a sequence or a known function, else a note.
 */
export function applyDefault(
  state: SchemaState,
  t: ImportTable,
  f: ImportField,
  d: NonNullable<ColumnFacts["defaultValue"]>,
  at: SourceLocation,
  onUpdate = false,
): void {
  if ("constant" in d) {
    const value = f.type === "boolean" && typeof d.constant === "number" ? d.constant !== 0 : d.constant;
    if ((f.type === "date" || f.type === "datetime") && typeof value === "string") {
      if (/^(now|today|current_timestamp|current_date)$/i.test(value.trim())) {
        f.generated = onUpdate ? "now_on_update" : "now";
        return;
      }
      const iso = isoTime(value, f.type);
      if (iso === undefined) {
        state.note(`${t.name}.${f.name}`, `default ${JSON.stringify(value)} is not a ${f.type}; left out`, at, "skipped", "default");
        return;
      }
      if (iso !== value)
        state.note(`${t.name}.${f.name}`, `default ${JSON.stringify(value)} written as ${iso} (ISO 8601)`, at, "changed", "default");
      f.default = iso;
      return;
    }
    if ((f.type === "object" || f.type === "array") && typeof value === "string") {
      // A JSON column's default is JSON text ('{}', '[]'): carried as the value it denotes.
      try {
        f.default = JSON.parse(value);
      } catch {
        state.note(`${t.name}.${f.name}`, `default ${JSON.stringify(value)} is not JSON; left out`, at, "skipped", "default");
      }
      return;
    }
    f.default = value;
  } else if ("expression" in d) {
    if (/^nextval\(/i.test(d.expression)) f.generated = "increment";
    else {
      const g = generatedDefault(d.expression);
      if (g) f.generated = g === "now" && onUpdate ? "now_on_update" : g;
      else state.note(`${t.name}.${f.name}`, `default expression ${d.expression} is not a constant; left out`, at, "skipped", "default");
    }
  }
}

/** A date or timestamp as SQL writes it (`1970-01-01 00:00:00 +00:00`) in ISO 8601, or undefined. */
function isoTime(text: string, type: "date" | "datetime"): string | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/.exec(text.trim());
  if (!m) return undefined;
  const [, day, time, zone] = m;
  if (type === "date") return time === undefined ? day : undefined;
  const z =
    zone === undefined ? "Z" : zone === "Z" ? "Z" : /^[+-]\d{2}$/.test(zone) ? `${zone}:00` : zone.replace(/^([+-]\d{2})(\d{2})$/, "$1:$2");
  return `${day}T${time ?? "00:00:00"}${z}`;
}
