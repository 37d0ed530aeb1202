import { cookies } from "next/headers";

import { TOKEN_COOKIE } from "@/lib/request";
import { callBackend, sameOrigin, unreachable } from "@/lib/server-api";

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
  if (!answer.ok) return new Response(text, { status: answer.status, headers: { "Content-Type": "application/json" } });
  const { access_token: token } = JSON.parse(text) as { access_token: string };
  const https = (request.headers.get("x-forwarded-proto") ?? new URL(request.url).protocol.replace(":", "")) === "https";
  (await cookies()).set(TOKEN_COOKIE, token, { httpOnly: true, sameSite: "lax", secure: https, path: "/" });
  return new Response(null, { status: 204 });
}
