import { cookies } from "next/headers";

/** The browser's time zone, as the root layout's script stores it in a cookie; UTC before that. */
export async function requestZone(): Promise<string> {
  const zone = (await cookies()).get("charter_tz")?.value;
  if (!zone) return "UTC";
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return zone;
  } catch {
    return "UTC";
  }
}
