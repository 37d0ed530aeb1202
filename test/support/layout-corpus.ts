import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Random valid domains that stress the layout of generated code: entity, field, state and enum
 * names from one word to a 60-character run of words, up to 14 fields of every type, references,
 * workflows with guards, validation rules with long messages, table and kanban pages with filters.
 * The same seed gives the same contracts. What the domains mean does not matter here; how long
 * their names make the lines does.
 */

const WORDS = [
  "a",
  "b",
  "x",
  "tag",
  "alpha",
  "beta",
  "notes",
  "label",
  "owner",
  "amount",
  "account",
  "invoice",
  "category",
  "customer",
  "priority",
  "shipment",
  "warehouse",
  "status_code",
  "total_price",
  "description",
  "organisation_unit",
  "internal_reference",
  "estimated_completion_date",
  "extremely_long_descriptive_identifier",
];

/** mulberry32: a small, seedable PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Kind =
  | "string"
  | "text"
  | "integer"
  | "number"
  | "boolean"
  | "date"
  | "datetime"
  | "email"
  | "uuid"
  | "array"
  | "object"
  | "enum"
  | "ref";
const KINDS: readonly Kind[] = [
  "string",
  "string",
  "text",
  "integer",
  "number",
  "boolean",
  "date",
  "datetime",
  "email",
  "uuid",
  "array",
  "object",
  "enum",
  "ref",
];
/** Names the mixins and the compiler already give every entity. */
const TAKEN = ["id", "created_at", "updated_at", "state", "number", "deleted_at", "tags"];

/** Writes the contracts of one random domain named `dom<seed>` under `dir`; returns `dir`. */
export function writeLayoutDomain(dir: string, seed: number): string {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const int = (lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
  const ident = (maxWords: number): string =>
    Array.from({ length: int(1, maxWords) }, () => pick(WORDS))
      .join("_")
      .slice(0, 60)
      .replace(/_+$/, "");
  const fresh = (used: Set<string>, maxWords: number): string => {
    let name = ident(maxWords);
    while (used.has(name)) name = ident(maxWords);
    used.add(name);
    return name;
  };
  const put = (rel: string, text: string): void => {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), `apiVersion: charter/v1\n${text}`);
  };
  const domain = `dom${seed}`;
  const entityNames = new Set<string>();
  const entities = Array.from({ length: int(1, 6) }, () => fresh(entityNames, 3));

  entities.forEach((e, i) => {
    const used = new Set(TAKEN);
    const fields: [string, Kind][] = [];
    let yaml = "";
    for (let k = int(1, 14); k > 0; k--) {
      const f = fresh(used, 3);
      const kind = pick(KINDS);
      let spec: string;
      if (kind === "enum") {
        const values = [...new Set(Array.from({ length: int(1, 8) }, () => ident(3)))];
        spec = `      type: string\n      enum: [${values.join(", ")}]\n      default: ${values[0]}\n`;
      } else if (kind === "ref") {
        const target = i === 0 ? null : entities[int(0, i - 1)];
        spec = target
          ? `      type: uuid\n      references:\n        entity: entity/${domain}/${target}\n` +
            (r() < 0.5 ? `        on_delete: ${pick(["cascade", "restrict", "set_null"])}\n` : "")
          : "      type: uuid\n";
      } else if (kind === "integer" || kind === "number") {
        spec = `      type: ${kind}\n${r() < 0.5 ? `      default: ${int(0, 5)}\n      constraints: {min: 0, max: ${int(10, 100000)}}\n` : ""}`;
      } else if (kind === "string") {
        spec =
          "      type: string\n" +
          (r() < 0.5 ? `      required: true\n      constraints: {minLength: 1, maxLength: ${int(10, 500)}}\n` : "") +
          (r() < 0.3 ? "      immutable: true\n" : "");
      } else if (kind === "array") spec = "      type: array\n      items_type: string\n";
      else spec = `      type: ${kind}\n`;
      fields.push([f, kind]);
      yaml += `    ${f}:\n${spec}`;
    }
    const numbers = fields.filter(([, k]) => k === "integer" || k === "number").map(([f]) => f);
    const strings = fields.filter(([, k]) => k === "string" || k === "text").map(([f]) => f);
    const workflow = r() < 0.5;
    const mixins = [
      "mixin/stdlib/identifiable",
      "mixin/stdlib/timestamped",
      ...(r() < 0.3 ? ["mixin/stdlib/soft_deletable"] : []),
      ...(r() < 0.3 ? ["mixin/stdlib/taggable"] : []),
    ];
    put(
      `entities/${e}.contract.yaml`,
      `kind: Entity\nmetadata:\n  name: ${e}\n  domain: ${domain}\nspec:\n  number_prefix: ${pick(["TK", "ABC", "XYZWVU"])}\n` +
        (workflow ? `  state_machine: workflow/${domain}/${e}_flow\n` : "") +
        `  mixins: [${mixins.join(", ")}]\n  fields:\n${yaml}`,
    );

    if (workflow) {
      const states = [...new Set(Array.from({ length: int(2, 7) }, () => ident(3)))];
      if (states.length < 2) states.push("finished_state");
      const transitions = states
        .map((s, j) => {
          const later = states.slice(j + 1).filter((_, q) => q === 0 || r() < 0.7);
          return `    ${s}: [${later.join(", ")}]\n`;
        })
        .join("");
      const conditions = [...numbers.map((n) => `${n} > ${int(0, 9)}`), ...strings.map((s) => `len(${s}) >= ${int(1, 9)}`)];
      const guard =
        conditions.length > 0
          ? `  guards:\n    "${states[0]} -> ${states[1]}":\n` +
            `      condition: "${Array.from({ length: int(1, 5) }, () => pick(conditions)).join(r() < 0.5 ? " and " : " or ")}"\n` +
            (strings.length > 0 ? `      require_fields: [${strings.join(", ")}]\n` : "")
          : "";
      const stateLines = states
        .map((s, j) => {
          const last = j === states.length - 1;
          return `    ${s}: {label: ${JSON.stringify(s.replace(/_/g, " "))}, category: ${last ? "closed, terminal: true" : "open"}}\n`;
        })
        .join("");
      put(
        `workflows/${e}_flow.contract.yaml`,
        `kind: Workflow\nmetadata:\n  name: ${e}_flow\n  domain: ${domain}\nspec:\n  initial: ${states[0]}\n  states:\n${stateLines}  transitions:\n${transitions}${guard}`,
      );
    }

    const path = `/${e.replace(/_/g, "-")}s`;
    const rule =
      numbers.length > 0
        ? `      validation:\n        - rule: "${numbers.map((n) => `${n} >= 0`).join(" and ")}"\n` +
          `          on_fail: {status: 422, error: validation_error, message: ${JSON.stringify(`The values of ${numbers.join(", ")} must not be negative`)}}\n`
        : "";
    const endpoint = (method: string, p: string): string => `    - method: ${method}\n      path: ${p}\n`;
    put(
      `routes/${e}_api.contract.yaml`,
      `kind: Route\nmetadata:\n  name: ${e}_api\n  domain: ${domain}\nspec:\n  entity: entity/${domain}/${e}\n  base_path: ${path}\n  endpoints:\n` +
        endpoint("GET", path) +
        endpoint("GET", `${path}/{id}`) +
        endpoint("POST", path) +
        rule +
        endpoint("PATCH", `${path}/{id}`) +
        endpoint("DELETE", `${path}/{id}`),
    );

    const columns = fields.map(([f]) => f);
    const filters = fields.filter(([, k]) => k === "enum" || k === "boolean" || k === "ref").map(([f]) => f);
    put(
      `pages/${e}.contract.yaml`,
      `kind: Page\nmetadata:\n  name: ${e}\n  domain: ${domain}\nspec:\n  route: ${path}\n  entity: entity/${domain}/${e}\n  generation_tier: mechanical\n` +
        `  title: ${JSON.stringify(ident(4).replace(/_/g, " "))}\n  views:\n` +
        (workflow ? `    - type: kanban\n      card_fields: [${columns.slice(0, int(1, 4)).join(", ")}]\n` : "") +
        `    - type: table\n      columns: [${columns.join(", ")}]\n` +
        (filters.length > 0 ? `  filters: [${filters.join(", ")}]\n` : ""),
    );
  });
  return dir;
}
