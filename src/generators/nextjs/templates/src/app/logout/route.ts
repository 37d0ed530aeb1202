import { cookies } from "next/headers";

import { TOKEN_COOKIE } from "@/lib/request";
import { sameOrigin } from "@/lib/server-api";

/**
 * Sign-out (a plain form post from the sidebar): drops the session cookie, then shows the login
 * page. Like every write, only from this app's own pages: another site cannot sign the user out.
 */
export async function POST(request: Request): Promise<Response> {
  if (!sameOrigin(request)) return Response.json({ error: "forbidden", message: "cross-site sign-out refused" }, { status: 403 });
  (await cookies()).delete(TOKEN_COOKIE);
  return new Response(null, { status: 303, headers: { Location: "/login" } });
}
