/**
 * The W3C trace context this server's calls to the backend carry, so that the backend's spans and
 * log lines join the trace of the page request: an incoming `traceparent` (from a browser's
 * instrumentation or a proxy) is continued under a new span id of this server; without one, a new
 * trace starts here. `tracestate` and a valid `X-Request-ID` go along unchanged.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$/;

function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes);
  for (;;) {
    crypto.getRandomValues(buf);
    // All zeros is the invalid id of the specification.
    if (buf.some((b) => b !== 0)) return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
  }
}

export function traceHeaders(incoming: Pick<Headers, "get">): Record<string, string> {
  const out: Record<string, string> = {};
  const parent = TRACEPARENT.exec(incoming.get("traceparent")?.trim().toLowerCase() ?? "");
  const traceId = parent && parent[1] !== "ff" && !/^0+$/.test(parent[2] ?? "") ? parent[2] : undefined;
  const flags = traceId ? parent?.[4] : "01";
  out.traceparent = `00-${traceId ?? randomHex(16)}-${randomHex(8)}-${flags}`;
  const state = incoming.get("tracestate");
  if (traceId && state) out.tracestate = state;
  const requestId = incoming.get("x-request-id")?.trim();
  if (requestId && REQUEST_ID.test(requestId)) out["X-Request-ID"] = requestId;
  return out;
}
