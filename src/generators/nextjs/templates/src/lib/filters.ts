import type { FieldSpec } from "@/lib/schema";

/**
 * The URL (and API) parameters of a list filter: a date or date-time field is filtered by an
 * inclusive range, `<field>_from` and `<field>_to`; any other field by equality, `<field>`.
 */
export function filterParams(field: FieldSpec): readonly string[] {
  return field.type === "date" || field.type === "datetime" ? [`${field.name}_from`, `${field.name}_to`] : [field.name];
}
