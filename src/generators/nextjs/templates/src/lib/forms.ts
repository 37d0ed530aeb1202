import { humanize } from "@/lib/display";
import { request, toApiError } from "@/lib/request";
import { type ApiRecord, type FieldSpec, own, type RuleSpec, readField } from "@/lib/schema";

/*
 * The server half of the create and edit forms: what each input starts with, and turning what the
 * browser sent back into the API's body, then the API's 422 into messages at the fields.
 */

/** API value -> what the input holds (datetime-local in `zone`, the browser's as last reported). */
export function toInput(field: FieldSpec, value: unknown, zone: string): string | boolean {
  if (field.type === "boolean" && !field.enumValues) return value === true;
  if (value === null || value === undefined) return "";
  switch (field.type) {
    case "datetime": {
      const d = new Date(String(value));
      if (Number.isNaN(d.getTime())) return String(value);
      const parts = new Intl.DateTimeFormat("en-CA", {
        timeZone: zone,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        hourCycle: "h23",
      }).formatToParts(d);
      const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
      return `${part("year")}-${part("month")}-${part("day")}T${part("hour")}:${part("minute")}`;
    }
    case "date":
      return String(value).slice(0, 10);
    case "array":
      return Array.isArray(value) ? value.map(String).join(", ") : String(value);
    case "object":
      return JSON.stringify(value, null, 2);
    default:
      return String(value);
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

/** What the input held -> API value; "" means "no value". Date-times arrive as ISO instants already. */
function fromInput(field: FieldSpec, raw: string | boolean): Parsed {
  if (typeof raw === "boolean") return { ok: true, value: raw };
  if (raw.trim() === "") return { ok: true, value: null };
  if (field.enumValues) {
    const match = field.enumValues.find((v) => String(v) === raw);
    return { ok: true, value: match ?? raw };
  }
  switch (field.type) {
    case "integer":
    case "number": {
      const n = Number(raw);
      // A malformed number goes to the server as typed, so its validation message is shown.
      return { ok: true, value: Number.isFinite(n) ? n : raw };
    }
    case "array": {
      const items = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      const numeric = field.itemsType === "integer" || field.itemsType === "number";
      return { ok: true, value: numeric ? items.map((s) => (Number.isFinite(Number(s)) ? Number(s) : s)) : items };
    }
    case "object":
      try {
        return { ok: true, value: JSON.parse(raw) };
      } catch {
        return { ok: false, error: "Enter valid JSON" };
      }
    default:
      return { ok: true, value: raw };
  }
}

/** A message said of a field (`must be at most 80 characters`), as shown below it. */
function sentence(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/** The answer a form gets: what to say, or the messages per field and the summary to announce. */
export type FormResult = { ok: true; message: string; id: string } | { ok: false; errors: Record<string, string>; summary: string };

/**
 * Saves a form: `values` holds what the browser sent (for an edit only the changed inputs). The
 * API's 422 is mapped to the fields: each item's `field` and plain `message` (pydantic-style `loc`
 * and `msg` from older backends), a failed rule at the fields its expression reads (in the
 * contract's words), `null_fields`; the rest goes into the summary.
 */
export async function saveForm<T extends ApiRecord>(options: {
  fields: readonly FieldSpec[];
  rules: Readonly<Record<string, RuleSpec>>;
  method: "POST" | "PATCH";
  path: string;
  values: Record<string, string | boolean>;
  entityLabel: string;
  headingField: string;
  done: "created" | "saved";
}): Promise<FormResult> {
  const { fields, rules, values } = options;
  const data: Record<string, unknown> = {};
  const atFields: Record<string, string> = {};
  const mark = (name: string, message: string) => {
    const before = own(atFields, name);
    atFields[name] = before ? `${before}; ${message}` : message;
  };
  const summary = (elsewhere: readonly string[]) => {
    const count = Object.keys(atFields).length;
    const names = fields.filter((f) => own(atFields, f.name)).map((f) => f.label);
    return `${count === 1 ? "1 field needs" : `${count} fields need`} attention: ${names.join(", ")}.${elsewhere.length > 0 ? ` ${elsewhere.join("; ")}` : ""}`;
  };
  // What the browser can tell is wrong (JSON that does not parse) goes to the server as typed all
  // the same: the server refuses it with every other bad field, so all messages show at once.
  const unparsed: Record<string, string> = {};
  for (const f of fields) {
    if (!(f.name in values)) continue;
    const parsed = fromInput(f, values[f.name] ?? "");
    if (!parsed.ok) {
      unparsed[f.name] = parsed.error;
      data[f.name] = values[f.name];
      continue;
    }
    // Creates leave empty fields to the API's defaults; edits send a cleared field as null.
    if (parsed.value === null && options.method === "POST") continue;
    data[f.name] = parsed.value;
  }
  try {
    const saved = await request<T>(options.method, options.path, data);
    const heading = options.headingField === "id" ? null : readField(saved, options.headingField);
    const name = heading === null || heading === undefined || heading === "" ? saved.id : String(heading);
    return { ok: true, message: `${options.entityLabel} “${name}” ${options.done}.`, id: saved.id };
  } catch (e) {
    const err = toApiError(e);
    const known = new Set(fields.map((f) => f.name));
    const elsewhere: string[] = [];
    for (const [name, message] of Object.entries(unparsed)) mark(name, message);
    for (const [name, message] of Object.entries(err.fieldErrors)) {
      // The browser's own word on a field it could not parse is the clearer one.
      if (name in unparsed) continue;
      if (known.has(name)) mark(name, sentence(message));
      else elsewhere.push(name ? `${humanize(name)}: ${message}` : sentence(message));
    }
    // A failed rule names no field in the body: the contract says which fields it reads, and
    // its message (or its error name) is what the user sees at those fields.
    const details = err.details && typeof err.details === "object" ? (err.details as Record<string, unknown>) : {};
    const rule = typeof details.rule === "string" ? own(rules, details.rule) : undefined;
    const ruleFields = rule ? rule.fields.filter((n) => known.has(n)) : [];
    if (rule && ruleFields.length > 0) for (const n of ruleFields) mark(n, rule.message);
    else if (rule) elsewhere.push(rule.message);
    const nulls = Array.isArray(details.null_fields) ? details.null_fields.map(String) : [];
    // Older backends name a cleared required field only in null_fields.
    for (const n of nulls) if (known.has(n) && !atFields[n]) mark(n, "Is required");
    if (Object.keys(atFields).length > 0) return { ok: false, errors: atFields, summary: summary(elsewhere) };
    return { ok: false, errors: {}, summary: elsewhere.length > 0 && err.status === 422 ? elsewhere.join("; ") : err.message };
  }
}
