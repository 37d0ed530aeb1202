/**
 * Secrets never enter tickets, notifications or pages (DESIGN.md "Healer trust model"): values
 * after a secret-sounding key (`password: ...`, `token=...`, `"api_key": "..."`), bearer tokens,
 * and the values of secret settings this process knows, whatever text they appear in.
 */
const KEYED = /((?:password|passwd|pwd|secret|token|api[_-]?key|authorization)["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;&}\]]+)/gi;
const BEARER = /\b(Bearer\s+)[\w.~+/=-]+/gi;
const SECRET_ENV = /(TOKEN|SECRET|PASSWORD|API_KEY)$/;
export const REDACTED = "***";

export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  let out = text.replace(BEARER, `$1${REDACTED}`).replace(KEYED, `$1${REDACTED}`);
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= 8 && SECRET_ENV.test(name)) out = out.split(value).join(REDACTED);
  }
  return out;
}

/** `redactSecrets` on every string of a JSON value. */
export function redactValue<T>(value: T, env: NodeJS.ProcessEnv = process.env): T {
  if (typeof value === "string") return redactSecrets(value, env) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, env)) as T;
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, env)])) as T;
  return value;
}
