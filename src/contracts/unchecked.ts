/**
 * Readers of plain JSON that has not passed the schema: an editor's buffer mid-edit (the language
 * server completes and hovers in contracts that do not validate yet), the reference index built
 * from it, a model's proposed contract (healer risk review) and the parse trees of importer inputs.
 * Each returns an empty value where the data has another shape. Code that reads a validated
 * contract uses the generated spec types instead (validatedContract in schema.ts).
 */

export function asRecord(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function asStringArray(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

export function asString(v: unknown, fallback = ""): string {
  return typeof v === "string" ? v : fallback;
}
