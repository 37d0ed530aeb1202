import { humanize } from "../compiler/naming.js";

/** Field names that hold a record's lifecycle. */
const STATUS_FIELDS = new Set(["status", "state", "stage", "phase", "lifecycle"]);
/** Values that end a lifecycle (terminal, category closed). */
const TERMINAL = new Set([
  "closed",
  "done",
  "completed",
  "complete",
  "cancelled",
  "canceled",
  "archived",
  "rejected",
  "deleted",
  "refunded",
  "expired",
]);
/** Values where a record waits (category hold). */
const HOLD = new Set(["on_hold", "hold", "paused", "pending", "waiting", "blocked", "suspended", "draft"]);

export interface InferredWorkflow {
  name: string;
  /** The entity field the workflow replaces. */
  field: string;
  spec: Record<string, unknown>;
  /** Whether the source's values were UPPER_CASE (Prisma's convention) and became snake_case states. */
  lowercased: boolean;
}

/**
 * A workflow from a status-like enum, only when confident: a field called status/state/stage/phase,
 * 2 to 12 snake_case values, and a default that says where records start. The source says nothing
 * about the moves, so every non-terminal state may move to every other state (the user narrows it);
 * terminal states, recognised by name, have none.
 */
export function inferWorkflow(entity: string, fields: ReadonlyMap<string, Record<string, unknown>>): InferredWorkflow | undefined {
  for (const [name, def] of fields) {
    if (!STATUS_FIELDS.has(name)) continue;
    const raw = def.enum;
    if (!Array.isArray(raw) || raw.length < 2 || raw.length > 12) continue;
    const upper = raw.every((v) => typeof v === "string" && /^[A-Z][A-Z0-9_]*$/.test(v));
    const values = upper ? raw.map((v) => String(v).toLowerCase()) : raw;
    if (!values.every((v): v is string => typeof v === "string" && /^[a-z][a-z0-9_]*$/.test(v))) continue;
    const initial = upper && typeof def.default === "string" ? def.default.toLowerCase() : def.default;
    if (typeof initial !== "string" || !values.includes(initial)) continue;
    const states: Record<string, unknown> = {};
    const transitions: Record<string, string[]> = {};
    for (const v of values) {
      const terminal = TERMINAL.has(v);
      const state: Record<string, unknown> = { label: humanize(v), category: terminal ? "closed" : HOLD.has(v) ? "hold" : "open" };
      if (terminal) state.terminal = true;
      states[v] = state;
      transitions[v] = terminal ? [] : values.filter((w) => w !== v);
    }
    if (Object.values(states).every((s) => (s as { terminal?: boolean }).terminal)) continue;
    return { name: `${entity}_lifecycle`, field: name, spec: { initial, states, transitions }, lowercased: upper };
  }
  return undefined;
}
