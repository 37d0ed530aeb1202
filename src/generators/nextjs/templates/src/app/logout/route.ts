import { cookies } from "next/headers";

import { TOKEN_COOKIE } from "@/lib/request";

/** Sign-out (a plain form post from the sidebar): drops the session cookie, then shows the login page. */
export async function POST(): Promise<Response> {
  (await cookies()).delete(TOKEN_COOKIE);
  return new Response(null, { status: 303, headers: { Location: "/login" } });
}
