import type { Ticket } from "../types.js";

/**
 * The link to a ticket's trace in the tracing tool, from `SVC_HEALER_TRACE_URL`: a template such as
 * `https://tempo.example/explore?traceId={trace_id}` (`{request_id}` works too). None without the
 * setting, without the id the template names, or for a template that is not an http(s) URL.
 */
export function traceUrl(t: Pick<Ticket, "trace_id" | "request_id">, env: NodeJS.ProcessEnv = process.env): string | null {
  const template = env.SVC_HEALER_TRACE_URL?.trim();
  if (!template || !/^https?:\/\//i.test(template)) return null;
  const ids: Record<string, string | null> = { trace_id: t.trace_id, request_id: t.request_id };
  let missing = false;
  const url = template.replace(/\{(trace_id|request_id)\}/g, (_m, name: string) => {
    const value = ids[name];
    if (!value) missing = true;
    return encodeURIComponent(value ?? "");
  });
  if (missing || url === template) return null;
  return url;
}
