import { findCycles } from "../compiler/graph.js";
import { compareText } from "../shared/text.js";
import type { ImportTable } from "./model.js";

/** Target fields that make a good `display` for a reference, best first. */
const DISPLAY_CANDIDATES = [
  "name",
  "title",
  "label",
  "display_name",
  "full_name",
  "username",
  "email",
  "code",
  "slug",
  "subject",
  "number",
];

/** The field of a target entity a reference shows instead of the id, if any reads well. */
export function pickDisplay(fields: readonly { name: string; type: string; required?: boolean }[]): string | undefined {
  for (const c of DISPLAY_CANDIDATES) if (fields.some((f) => f.name === c)) return c;
  const text = fields.filter((f) => f.type === "string" || f.type === "email");
  return (text.find((f) => f.required) ?? text[0])?.name;
}

/**
 * A many-to-many join table: two foreign keys and nothing else of its own but keys and timestamps.
 * Contracts have no many-to-many relation, so such a table stays an entity with two references;
 * recognising it lets the summary say so instead of presenting it as an ordinary entity.
 */
export function joinTableEnds(t: ImportTable): [string, string] | undefined {
  const single = t.foreignKeys.filter((fk) => fk.columns.length === 1);
  if (single.length !== 2 || t.foreignKeys.length !== 2) return undefined;
  const fkCols = new Set(single.flatMap((fk) => fk.columns));
  const own = t.fields.filter((f) => !fkCols.has(f.name) && !["id", "created_at", "updated_at"].includes(f.name));
  if (own.length > 0) return undefined;
  return [single[0]?.table as string, single[1]?.table as string];
}

/** One reference between entities, as the cycle breaker sees it. */
export interface RefEdge {
  from: string;
  field: string;
  to: string;
  required: boolean;
}

/**
 * The compiler refuses mutual references between entities (a dependency cycle); a self-reference
 * is allowed. Real schemas have such cycles (a user's default address, an address's user), so one
 * edge per cycle is dropped: an optional one before a required one, then the last by name, so the
 * choice is stable. The field stays (a plain uuid); only the `references` annotation goes.
 */
export function breakCycles(entities: readonly string[], refs: readonly RefEdge[]): RefEdge[] {
  const dropped: RefEdge[] = [];
  let live = refs.filter((r) => r.from !== r.to);
  for (let guard = 0; guard < 1000; guard++) {
    const cycles = findCycles(
      entities,
      live.map((r) => ({ from: r.from, to: r.to, via: "reference" as const })),
    );
    const cycle = cycles[0];
    if (!cycle) break;
    const onCycle = new Set<string>();
    for (let i = 0; i < cycle.length - 1; i++) onCycle.add(`${cycle[i]}\u0000${cycle[i + 1]}`);
    const candidates = live
      .filter((r) => onCycle.has(`${r.from}\u0000${r.to}`))
      .sort((a, b) => Number(a.required) - Number(b.required) || compareText(`${b.from}.${b.field}`, `${a.from}.${a.field}`));
    const victim = candidates[0];
    if (!victim) break;
    dropped.push(victim);
    live = live.filter((r) => r !== victim);
  }
  return dropped;
}
