import { createHash } from "node:crypto";

/** Name derivations shared by the compiler and generators; pure and locale-independent. */

export function pascalCase(snake: string): string {
  return snake
    .split(/[_\-\s]+/)
    .filter(Boolean)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join("");
}

export function camelCase(snake: string): string {
  const p = pascalCase(snake);
  return p.charAt(0).toLowerCase() + p.slice(1);
}

export function kebabCase(snake: string): string {
  return snake.replace(/_/g, "-");
}

/** `ticket_comment` -> `Ticket comment`. */
export function humanize(snake: string): string {
  const words = snake.split("_").filter(Boolean).join(" ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const IRREGULAR: Record<string, string> = {
  person: "people",
  child: "children",
  man: "men",
  woman: "women",
  status: "statuses",
  index: "indexes",
  datum: "data",
};

/** English plural of the last word of a snake_case name: `ticket_category` -> `ticket_categories`. */
export function pluralize(snake: string): string {
  const parts = snake.split("_");
  const last = parts.pop() ?? "";
  parts.push(pluralWord(last));
  return parts.join("_");
}

function pluralWord(w: string): string {
  // Own keys only: `constructor` must not find Object.prototype's.
  if (Object.hasOwn(IRREGULAR, w)) return IRREGULAR[w] as string;
  if (/[^aeiou]y$/.test(w)) return `${w.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(w)) return `${w}es`;
  return `${w}s`;
}

/**
 * Tables every generated PostgreSQL database keeps for itself, with what they hold. An entity
 * whose plural is one of them (`event` -> `events`) is stored in `<name>_records` instead; a
 * `spec.table` naming one is an error.
 */
export const SYSTEM_TABLES: Readonly<Record<string, string>> = {
  agent_runs: "the runs of agents",
  auth_users: "the users of the auth Infra",
  events: "the events outbox",
  idempotency_keys: "the first responses of idempotent creates",
  row_counts: "the row counters of list totals",
  row_versions: "the version of the counted tables' rows (a sequence), for cached list totals",
  schema_migrations: "the applied migrations",
  schema_migrations_held: "the destructive migration steps held back until `python -m app.migrate --allow-destructive`",
};

/** The table of an entity with no `spec.table`: its plural, unless that is a system table. */
export function defaultTable(name: string): string {
  const plural = pluralize(name);
  return Object.hasOwn(SYSTEM_TABLES, plural) ? `${name}_records` : plural;
}

/**
 * PostgreSQL keeps this many bytes of an identifier (NAMEDATALEN - 1) and silently cuts the rest,
 * so a longer table or column name would no longer be the name the API and the queries use.
 */
export const MAX_IDENTIFIER_BYTES = 63;

/**
 * Keeps a derived name (an index, a constraint, a sequence) within the identifier limit
 * deterministically: a long name becomes its first bytes, `_` and 8 hex digits of its SHA-256, so
 * two long names sharing a prefix stay distinct. Names the API shows (tables, columns) are never
 * shortened: validation refuses them instead (`name.too_long`).
 */
export function limitIdentifier(name: string): string {
  if (Buffer.byteLength(name, "utf8") <= MAX_IDENTIFIER_BYTES) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  let head = name;
  while (Buffer.byteLength(head, "utf8") > MAX_IDENTIFIER_BYTES - 9) head = head.slice(0, -1);
  return `${head}_${hash}`;
}
