import { RESOURCE_PATHS } from "@/lib/api";
import { callBackend, passOn, sameOrigin, sessionToken, unreachable } from "@/lib/server-api";

/**
 * Whether `to` is a path of one of the API's resources (a Route's base path or below it), spelled
 * plainly: no dot segments or encoded slashes that the backend could read as another path. The
 * auth endpoints (they answer with tokens), the API's documents and anything else stay out of
 * reach of the page's scripts.
 */
function resourcePath(to: string): boolean {
  if (!to.startsWith("/") || to.startsWith("//") || /%2f|%5c|\\/i.test(to)) return false;
  const path = to.split("?")[0] as string;
  if (new URL(path, "http://x").pathname !== path) return false;
  return RESOURCE_PATHS.some((base) => path === base || path === `${base}/` || path.startsWith(`${base}/`));
}

/**
 * The browser's way to the backend: `?to=/tickets/123` is forwarded to the API with the bearer
 * token of the httpOnly session cookie, so no script in the page ever holds the token. Only the
 * API's resource paths are reachable (`to` is appended to API_URL).
 */
async function forward(request: Request): Promise<Response> {
  const to = new URL(request.url).searchParams.get("to") ?? "";
  if (!resourcePath(to)) {
    return Response.json({ error: "forbidden", message: "`to` must be a path of the API's resources" }, { status: 403 });
  }
  if (request.method !== "GET" && !sameOrigin(request)) {
    return Response.json({ error: "forbidden", message: "cross-site request refused" }, { status: 403 });
  }
  const body = request.method === "GET" || request.method === "DELETE" ? null : await request.text();
  try {
    const answer = await callBackend(request.method, to, body || null, await sessionToken());
    return passOn(answer, answer.status === 204 ? null : await answer.text());
  } catch {
    return unreachable();
  }
}

export { forward as DELETE, forward as GET, forward as PATCH, forward as POST, forward as PUT };
