/**
 * The request core every API call goes through, on the server and in the browser.
 *
 * Server components call the backend directly, at the address the server is configured with at
 * run time (API_URL; NEXT_PUBLIC_API_URL from the build is the fallback), with the bearer token of
 * the httpOnly session cookie (lib/server-api.ts installs that transport). The browser never sees
 * the token: its calls (saves, deletes, moves) go to this app's own /api/backend route, which
 * forwards them with the cookie's token.
 */

/** Name of the httpOnly cookie holding the bearer token (set by /session at sign-in). */
export const TOKEN_COOKIE = "charter_token";

/** What every caller is told when the backend cannot be reached (status 0 here, 502 from the routes). */
export const UNREACHABLE = "Cannot reach the API. Check that the backend is running.";

/** Equality filters of a list endpoint (`?field=value`). */
export type ListFilters = Record<string, string | number | boolean | null | undefined>;

/**
 * Every failed call becomes an ApiError. `status` is 0 when the API could not be reached at all,
 * so pages can tell "the backend is down" apart from "the backend said no".
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  /** Messages per field name, from a 422 body; "" holds the messages that name no field. */
  readonly fieldErrors: Record<string, string>;

  constructor(status: number, code: string, message: string, details: unknown = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.fieldErrors = fieldErrorsOf(details);
  }
}

export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  return new ApiError(0, "client_error", e instanceof Error ? e.message : String(e));
}

/**
 * Reads field messages out of the error details: a list of items with `field` + `message` (the
 * generated API's 422) or only pydantic's `loc` + `msg`, or such a list under `errors`. Other details (a failed rule, a guard) name no field and stay in
 * the message.
 */
function fieldErrorsOf(details: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (field: string, message: string): void => {
    // Own keys only: a field may be named `constructor`, which `out` would otherwise inherit.
    const before = Object.hasOwn(out, field) ? out[field] : undefined;
    out[field] = before ? `${before}; ${message}` : message;
  };
  const items = Array.isArray(details)
    ? details
    : details && typeof details === "object" && Array.isArray((details as { errors?: unknown }).errors)
      ? (details as { errors: unknown[] }).errors
      : null;
  if (items) {
    for (const item of items) {
      if (!item || typeof item !== "object") continue;
      const rec = item as Record<string, unknown>;
      // `message` is the plain one (`must be at most 80 characters`); `msg` is pydantic's own.
      const message = String(rec.message ?? rec.msg ?? "invalid value");
      let field = typeof rec.field === "string" ? rec.field : "";
      if (!field && Array.isArray(rec.loc)) {
        const names = rec.loc.filter((p): p is string => typeof p === "string" && p !== "body" && p !== "query");
        field = names[0] ?? "";
      }
      add(field, message);
    }
  }
  return out;
}

function queryString(params: ListFilters): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === "") continue;
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return parts.length > 0 ? `?${parts.join("&")}` : "";
}

/** Sends one call to the backend: `path` is the backend's path with its query string. */
export type Transport = (method: string, path: string, body: string | null) => Promise<Response>;

const JSON_HEADERS = { "Content-Type": "application/json", Accept: "application/json" };

/** The browser's transport: this app's /api/backend route, which adds the session's token. */
let transport: Transport = (method, path, body) =>
  fetch(`/api/backend?to=${encodeURIComponent(path)}`, { method, headers: JSON_HEADERS, body, cache: "no-store" });

/** Replaces the transport (the server installs one that calls the backend directly). */
export function setTransport(next: Transport): void {
  transport = next;
}

/** Every request carries `Content-Type: application/json`; the transport adds the bearer token. */
export async function request<T>(method: string, path: string, body?: unknown, query: ListFilters = {}): Promise<T> {
  let response: Response;
  try {
    response = await transport(method, `${path}${queryString(query)}`, body === undefined ? null : JSON.stringify(body));
  } catch {
    throw new ApiError(0, "unreachable", UNREACHABLE);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let data: unknown = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!response.ok) {
    const rec = data && typeof data === "object" ? (data as Record<string, unknown>) : {};
    // FastAPI's own errors use `detail`; the generated app's use `error`, `message`, `details`.
    const details = rec.details ?? rec.detail ?? null;
    const message =
      typeof rec.message === "string"
        ? rec.message
        : typeof rec.detail === "string"
          ? rec.detail
          : `${method} ${path} failed with status ${response.status}`;
    const code = typeof rec.error === "string" ? rec.error : `http_${response.status}`;
    // The /api/backend route answers 502 "unreachable" when it cannot reach the backend.
    throw new ApiError(code === "unreachable" ? 0 : response.status, code, message, details);
  }
  return data as T;
}
