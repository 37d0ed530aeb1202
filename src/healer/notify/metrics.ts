import type { TicketStore } from "../store/store.js";
import type { TicketStatus } from "../types.js";

/** The monitor view (the body of `GET /healer/status`, plus a total). */
export interface HealerStatus {
  queue: Record<TicketStatus, number>;
  total: number;
  /** Applied tickets over tickets that reached an end (applied, failed, rejected), per tier; 0 with none. */
  success_rate: { tier_1: number; tier_2: number; tier_3: number };
  recurring: { contract_fqn: string; error_type: string; count: number }[];
  recent: { id: string; fqn: string; status: TicketStatus; tier: number }[];
}

export async function healerStatus(store: TicketStore, limits: { recurring?: number; recent?: number } = {}): Promise<HealerStatus> {
  const queue = await store.countByStatus();
  const total = Object.values(queue).reduce((a, b) => a + b, 0);
  const { rates, recurring, recent } = await store.outcomes({ recurring: limits.recurring ?? 10, recent: limits.recent ?? 10 });
  const rate = (tier: number): number => {
    const r = rates.find((x) => x.tier === tier);
    return r && r.n > 0 ? Math.round((r.ok / r.n) * 1000) / 1000 : 0;
  };
  return { queue, total, success_rate: { tier_1: rate(1), tier_2: rate(2), tier_3: rate(3) }, recurring, recent };
}
