import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { TicketStore } from "../store/store.js";
import { TICKET_STATUSES } from "../types.js";

/**
 * The Healer's figures in Prometheus' format (`GET /metrics` of `charter healer serve`).
 *
 * Model calls are counted where they happen, for the whole process; what belongs to one service
 * (reports it took, its store's tickets) lives in a registry of that service, merged at scrape.
 */
const processRegistry = new Registry();

const modelCalls = new Counter({
  name: "healer_model_calls_total",
  help: "Calls to the LLM proposing fixes, by outcome (ok, timeout, aborted, provider, unparsable, invalid)",
  labelNames: ["outcome"] as const,
  registers: [processRegistry],
});
const modelLatency = new Histogram({
  name: "healer_model_call_duration_seconds",
  help: "How long a call to the LLM took, by outcome",
  labelNames: ["outcome"] as const,
  buckets: [0.5, 1, 2.5, 5, 10, 20, 30, 60, 120],
  registers: [processRegistry],
});

export function observeModelCall(outcome: string, ms: number): void {
  modelCalls.inc({ outcome });
  modelLatency.observe({ outcome }, ms / 1000);
}

export interface ServiceMetrics {
  /** A report taken in: `created` a ticket or was a `repeat` of an open one. */
  ingested(created: boolean): void;
  /** The text of `GET /metrics`, with the store's counts read now. */
  render(): Promise<string>;
  readonly contentType: string;
}

export function serviceMetrics(store: TicketStore): ServiceMetrics {
  const registry = new Registry();
  const reports = new Counter({
    name: "healer_reports_ingested_total",
    help: "Error reports taken in, by result (created a ticket, or a repeat of one)",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const tickets = new Gauge({
    name: "healer_tickets",
    help: "Tickets of the store, by status",
    labelNames: ["status"] as const,
    registers: [registry],
  });
  const queue = new Gauge({ name: "healer_queue_depth", help: "Tickets waiting to be analysed", registers: [registry] });
  return {
    ingested: (created) => reports.inc({ result: created ? "created" : "repeat" }),
    contentType: registry.contentType,
    async render() {
      const counts = await store.countByStatus();
      for (const status of TICKET_STATUSES) tickets.set({ status }, counts[status] ?? 0);
      queue.set(counts.queued ?? 0);
      return Registry.merge([processRegistry, registry]).metrics();
    },
  };
}
