import { callBackend, sameOrigin, sessionToken, unreachable } from "@/lib/server-api";

/**
 * The browser's way to the backend: `?to=/tickets/123` is forwarded to the API with the bearer
 * token of the httpOnly session cookie, so no script in the page ever holds the token. Only paths
 * of the configured API are reachable (`to` is appended to API_URL).
 */
async function forward(request: Request): Promise<Response> {
  const to = new URL(request.url).searchParams.get("to") ?? "";
  if (!to.startsWith("/") || to.startsWith("//")) {
    return Response.json({ error: "bad_request", message: "`to` must be an API path" }, { status: 400 });
  }
  if (request.method !== "GET" && !sameOrigin(request)) {
    return Response.json({ error: "forbidden", message: "cross-site request refused" }, { status: 403 });
  }
  const body = request.method === "GET" || request.method === "DELETE" ? null : await request.text();
  try {
    const answer = await callBackend(request.method, to, body || null, await sessionToken());
    const text = answer.status === 204 ? null : await answer.text();
    return new Response(text, {
      status: answer.status,
      headers: { "Content-Type": answer.headers.get("Content-Type") ?? "application/json", "Cache-Control": "no-store" },
    });
  } catch {
    return unreachable();
  }
}

export { forward as DELETE, forward as GET, forward as PATCH, forward as POST, forward as PUT };
