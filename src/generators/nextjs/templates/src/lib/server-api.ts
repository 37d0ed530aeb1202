import { cookies } from "next/headers";

import { setTransport, TOKEN_COOKIE, UNREACHABLE } from "./request";

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

/** Calls the backend; `path` starts with "/" and holds the query string. */
export async function callBackend(method: string, path: string, body: string | null, token: string | null): Promise<Response> {
  const headers: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  return fetch(`${API_URL}${path}`, { method, headers, body, cache: "no-store" });
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
