import { cookies } from "next/headers";

import { TOKEN_COOKIE } from "@/lib/request";
import { callBackend, passOn, sameOrigin, sessionToken, unreachable } from "@/lib/server-api";

/**
 * Sign-in: the credentials go to the backend's /auth/login; its bearer token is kept in an
 * httpOnly, SameSite=Lax cookie (Secure when the app is served over https), out of reach of any
 * script. The backend's answer is passed on as it is when it refuses.
 */
export async function POST(request: Request): Promise<Response> {
  if (!sameOrigin(request)) return Response.json({ error: "forbidden", message: "cross-site sign-in refused" }, { status: 403 });
  const body = await request.text();
  let answer: Response;
  try {
    answer = await callBackend("POST", "/auth/login", body, null);
  } catch {
    return unreachable();
  }
  const text = await answer.text();
  // A refusal goes back as it is, with its Retry-After when sign-ins are throttled.
  if (!answer.ok) return passOn(answer, text);
  const { access_token: token } = JSON.parse(text) as { access_token: string };
  const https = (request.headers.get("x-forwarded-proto") ?? new URL(request.url).protocol.replace(":", "")) === "https";
  (await cookies()).set(TOKEN_COOKIE, token, { httpOnly: true, sameSite: "lax", secure: https, path: "/" });
  return new Response(null, { status: 204 });
}

/**
 * Refresh: the session's token is exchanged for a new one through the backend's /auth/refresh
 * (which re-checks the user) and kept in the cookie; the page gets 204 and never the token.
 */
export async function PUT(request: Request): Promise<Response> {
  if (!sameOrigin(request)) return Response.json({ error: "forbidden", message: "cross-site refresh refused" }, { status: 403 });
  const current = await sessionToken();
  if (!current) return Response.json({ error: "unauthorized", message: "not signed in" }, { status: 401 });
  let answer: Response;
  try {
    answer = await callBackend("POST", "/auth/refresh", null, current);
  } catch {
    return unreachable();
  }
  const text = await answer.text();
  if (!answer.ok) return passOn(answer, text);
  const { access_token: token } = JSON.parse(text) as { access_token: string };
  const https = (request.headers.get("x-forwarded-proto") ?? new URL(request.url).protocol.replace(":", "")) === "https";
  (await cookies()).set(TOKEN_COOKIE, token, { httpOnly: true, sameSite: "lax", secure: https, path: "/" });
  return new Response(null, { status: 204 });
}
