/**
 * Where sign-in sends the user back to: the page they asked for, carried in `/login?next=`. Only a
 * path of this app is followed; anything that could lead elsewhere (`//host`, `/\host`, a scheme,
 * control characters) or back to the sign-in page itself becomes "/". Browsers read `\` as `/`
 * and drop tabs and newlines from addresses, hence those checks. The path is judged again after
 * normalisation: `/..//evil.example/x` resolves to `//evil.example/x`, which a browser reads as
 * another site.
 */
export function safeNext(value: string | null | undefined): string {
  if (!value?.startsWith("/") || value.startsWith("//")) return "/";
  if (value.includes("\\") || [...value].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)) return "/";
  const base = "http://app.invalid";
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return "/";
  }
  if (url.origin !== base || url.pathname === "/login" || url.pathname.startsWith("//")) return "/";
  return `${url.pathname}${url.search}${url.hash}`;
}

/** The sign-in page, set to come back to `path` afterwards. */
export function loginHref(path: string): string {
  const next = safeNext(path);
  return next === "/" ? "/login" : `/login?next=${encodeURIComponent(next)}`;
}
