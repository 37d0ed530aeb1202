import { cookies, headers } from "next/headers";

import { setTransport, TOKEN_COOKIE, UNREACHABLE } from "./request";
import { traceHeaders } from "./trace-context";

/**
 * Server side of the API: the backend's address (read when the server starts, so one build runs
 * against any backend) and the transport that calls it with the session cookie's bearer token.
 * Server components import the clients from here, which installs the transport first.
 */
export const API_URL: string = (process.env.API_URL || process.env.NEXT_PUBLIC_API_URL || "http://localhost:8000").replace(/\/+$/, "");

/** The bearer token of this request's session cookie, if signed in. */
export async function sessionToken(): Promise<string | null> {
  return (await cookies()).get(TOKEN_COOKIE)?.value ?? null;
}

/** The answer of this app's routes when the backend cannot be reached. */
export function unreachable(): Response {
  return Response.json({ error: "unreachable", message: UNREACHABLE }, { status: 502 });
}

/**
 * Calls the backend; `path` starts with "/" and holds the query string. The browser's address
 * goes along (X-Forwarded-For, as client-address.cjs set it), so the backend's per-address login
 * throttle counts each browser, not this server, and so does the trace context (trace-context.ts).
 * Redirects come back as they are.
 */
export async function callBackend(method: string, path: string, body: string | null, token: string | null): Promise<Response> {
  const sent: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json" };
  if (token) sent.Authorization = `Bearer ${token}`;
  const incoming = await headers();
  const client = incoming.get("x-forwarded-for")?.split(",").pop()?.trim();
  if (client) sent["X-Forwarded-For"] = client;
  Object.assign(sent, traceHeaders(incoming));
  return fetch(`${API_URL}${path}`, { method, headers: sent, body, cache: "no-store", redirect: "manual" });
}

/** The backend's headers a caller needs: when to retry, which methods exist, where a resource is. */
const PASSED_ON = ["Retry-After", "Allow", "Location"];

/** A Location of the backend, as the browser reaches it: through /api/backend. */
function throughProxy(location: string): string {
  const target = new URL(location, `${API_URL}/`);
  if (target.origin !== new URL(API_URL).origin) return location;
  return `/api/backend?to=${encodeURIComponent(target.pathname + target.search)}`;
}

/** A response of this app's routes with the backend's status, body and the headers above. */
export function passOn(answer: Response, text: string | null): Response {
  const out = new Headers({ "Content-Type": answer.headers.get("Content-Type") ?? "application/json", "Cache-Control": "no-store" });
  for (const name of PASSED_ON) {
    const value = answer.headers.get(name);
    if (value !== null) out.set(name, name === "Location" ? throughProxy(value) : value);
  }
  return new Response(text, { status: answer.status, headers: out });
}

/**
 * Whether a state-changing request comes from this app's own pages: a browser sends `Origin` with
 * every cross-site POST, so one naming another host is refused (the SameSite=Lax cookie already
 * stays home; this also stops a foreign page from signing the user in to another account).
 */
export function sameOrigin(request: Request): boolean {
  const origin = request.headers.get("origin");
  if (!origin) return true;
  try {
    return new URL(origin).host === (request.headers.get("x-forwarded-host") ?? request.headers.get("host"));
  } catch {
    return false;
  }
}

setTransport(async (method, path, body) => callBackend(method, path, body, await sessionToken()));

export * from "./api";
