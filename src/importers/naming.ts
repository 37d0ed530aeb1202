import { pluralize } from "../compiler/naming.js";

/**
 * Contract names: `^[a-z][a-z0-9_]*$`. Sources use every convention (PascalCase models, camelCase
 * properties, kebab-case paths, quoted SQL identifiers with spaces); this folds them all into
 * snake_case the same way, so `OrderItem`, `orderItem`, `order-item` and `ORDER_ITEM` meet.
 */
export function snakeCase(raw: string): string {
  const words = raw
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (words === "") return "";
  return /^[0-9]/.test(words) ? `n_${words}` : words;
}

const IRREGULAR_SINGULAR: Record<string, string> = {
  people: "person",
  children: "child",
  men: "man",
  women: "woman",
  data: "datum",
  statuses: "status",
  indexes: "index",
  indices: "index",
  addresses: "address",
  analyses: "analysis",
};

/** Words that look plural but are not (`status`, `news`), left alone. */
const NOT_PLURAL = new Set([
  "status",
  "news",
  "series",
  "species",
  "access",
  "address",
  "process",
  "class",
  "business",
  "analysis",
  "bus",
  "gas",
  "alias",
  "canvas",
]);

/** Singular of the last word of a snake_case name: `order_items` -> `order_item`, `categories` -> `category`. */
export function singularize(snake: string): string {
  const parts = snake.split("_");
  const last = parts.pop() ?? "";
  parts.push(singularWord(last));
  return parts.join("_");
}

function singularWord(w: string): string {
  if (IRREGULAR_SINGULAR[w]) return IRREGULAR_SINGULAR[w];
  if (NOT_PLURAL.has(w) || w.length <= 3) return w;
  if (w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  if (/(ss|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith("ss") || w.endsWith("us") || w.endsWith("is")) return w;
  if (w.endsWith("s")) return w.slice(0, -1);
  return w;
}

/** The entity name of a table, schema or model: snake_case and singular. */
export function entityName(raw: string): string {
  return singularize(snakeCase(raw));
}

/** The table name the compiler derives from an entity name, to know when `spec.table` is needed. */
export function defaultTable(entity: string): string {
  return pluralize(entity);
}

/**
 * Field names a workflow owns (`state`): a source column with this name is renamed, unless it is
 * the status field the workflow replaces.
 */
// `links` is the generated app's own (its records' `_links`, HATEOAS): a field of that name would be lost.
export const RESERVED_FIELD_NAMES = new Set(["state", "links"]);

/**
 * Gives each raw name a unique normalised name. Collisions after normalisation (`userName` and
 * `user_name`) are never merged: the later one gets a numbered suffix and a note says why.
 */
export function uniqueNames(
  raws: readonly string[],
  normalise: (raw: string) => string,
  taken: ReadonlySet<string> = new Set(),
): { names: Map<string, string>; collisions: { raw: string; name: string; clashesWith: string }[] } {
  const used = new Map<string, string>();
  for (const t of taken) used.set(t, t);
  const names = new Map<string, string>();
  const collisions: { raw: string; name: string; clashesWith: string }[] = [];
  for (const raw of raws) {
    const base = normalise(raw) || "unnamed";
    let name = base;
    let n = 2;
    while (used.has(name)) name = `${base}_${n++}`;
    if (name !== base) collisions.push({ raw, name, clashesWith: used.get(base) ?? base });
    used.set(name, raw);
    names.set(raw, name);
  }
  return { names, collisions };
}
