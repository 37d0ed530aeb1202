import type { TicketStore } from "./store.js";
import type { TicketStatus } from "./types.js";

/** The monitor view (SPEC.md "Monitor metrics"; the body of `GET /healer/status`, plus a total). */
export interface HealerStatus {
  queue: Record<TicketStatus, number>;
  total: number;
  /** Applied tickets over tickets that reached an end (applied, failed, rejected), per tier; 0 with none. */
  success_rate: { tier_1: number; tier_2: number; tier_3: number };
  recurring: { contract_fqn: string; error_type: string; count: number }[];
  recent: { id: string; fqn: string; status: TicketStatus; tier: number }[];
}

export function healerStatus(store: TicketStore, limits: { recurring?: number; recent?: number } = {}): HealerStatus {
  const queue = store.countByStatus();
  const total = Object.values(queue).reduce((a, b) => a + b, 0);
  const rates = store.db
    .prepare(
      `SELECT tier, SUM(status = 'applied') AS ok, COUNT(*) AS n FROM tickets
       WHERE status IN ('applied', 'failed', 'rejected') GROUP BY tier`,
    )
    .all() as { tier: number; ok: number; n: number }[];
  const rate = (tier: number): number => {
    const r = rates.find((x) => x.tier === tier);
    return r && r.n > 0 ? Math.round((r.ok / r.n) * 1000) / 1000 : 0;
  };
  // An error recurs when it was reported more than once: within one ticket (occurrences) or
  // across tickets that were closed and opened again.
  const recurring = store.db
    .prepare(
      `SELECT COALESCE(contract_fqn, '') AS contract_fqn, error_type, SUM(occurrences) AS count FROM tickets
       GROUP BY COALESCE(contract_fqn, ''), error_type HAVING SUM(occurrences) > 1
       ORDER BY count DESC, contract_fqn, error_type LIMIT ?`,
    )
    .all(limits.recurring ?? 10) as HealerStatus["recurring"];
  const recent = store.db
    .prepare(
      `SELECT id, COALESCE(contract_fqn, '') AS fqn, status, tier FROM tickets
       WHERE resolved_at IS NOT NULL ORDER BY updated_at DESC, seq DESC LIMIT ?`,
    )
    .all(limits.recent ?? 10) as HealerStatus["recent"];
  return { queue, total, success_rate: { tier_1: rate(1), tier_2: rate(2), tier_3: rate(3) }, recurring, recent };
}
