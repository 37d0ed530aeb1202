import type { TicketContext } from "../types.js";

/**
 * Runtime reports quote the rows and requests that failed: PostgreSQL's `DETAIL: Key (email)=(...)`
 * and `Failing row contains (...)`, pydantic's `input_value=...`, Python reprs of dicts and values.
 * Those values are personal data more often than not, and they differ between occurrences of one
 * error, so a ticket keeps none of them: what classifies the error (exception type, constraint,
 * column, table, attribute) stays, every value becomes a placeholder. Redaction is idempotent, so a
 * message redacted once fingerprints the same as the raw message.
 */

export const REDACTED = "<redacted>";

/**
 * PostgreSQL's key detail (unique and foreign key violations): the columns stay, the values go,
 * up to the words that end the detail, else (an unknown wording) up to the end of the line.
 */
const KEY_DETAIL =
  /\bKey \(([^)\n]*)\)=\(.*?\)(?= (?:already exists|is not present|is still referenced|conflicts with))|\bKey \(([^)\n]*)\)=\([^\n]*/g;
/** PostgreSQL's not-null and check violations quote the whole row, up to the end of the line. */
const FAILING_ROW = /\bFailing row contains \([^\n]*/g;
/** pydantic v2: `[type=value_error, input_value='a@b.c', input_type=str]`; the value may hold commas and brackets. */
const INPUT_VALUE = /\binput_value=[\s\S]*?(?=, input_type=|\]\s*$|\]\n)/g;
/** A quoted literal, single or double, not an apostrophe inside a word. */
const QUOTED = /(?<![\w\\])(["'])((?:\\.|(?!\1)[^\\\n])*)\1(?!\w)/g;
/**
 * Words after which a quoted identifier names a thing of the schema or the code, not a value (a
 * KeyError's key is the code's own lookup: `KeyError: 'status'` and `KeyError: 'owner'` are two bugs).
 */
const NAMES_A_THING =
  /\b(?:column|constraint|relation|table|index|schema|database|role|function|sequence|view|trigger|domain|extension|operator|type|attribute|module|named|name|argument|field|property|class|object|File|savepoint|cursor|channel|enum|mixin|KeyError:)\s*$/i;
const IDENTIFIER = /^[A-Za-z_][\w.]*$/;
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const DATE_TIME = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g;
/**
 * A number given as a value (`=42`, `: 42`) or long enough to be a phone, account or card number;
 * a status code (`status_code=500`) is kept, it classifies the error.
 */
const VALUE_NUMBER = /(?<!status(?:[ _]code)?\s?[=:]\s?)(?<=[=:]\s?)-?\d+(?:\.\d+)?\b|\+?\d[\d ()-]{5,}\d/gi;

/** The message of a runtime error without the values it quotes. */
export function redactText(text: string): string {
  return text
    .replace(KEY_DETAIL, (m: string, known?: string, other?: string) =>
      m.endsWith(`(${REDACTED})`) ? m : `Key (${known ?? other})=(${REDACTED})`,
    )
    .replace(FAILING_ROW, `Failing row contains (${REDACTED})`)
    .replace(INPUT_VALUE, `input_value=${REDACTED}`)
    .replace(QUOTED, (literal: string, quote: string, inner: string, offset: number, whole: string) => {
      if (inner === REDACTED) return literal;
      if (IDENTIFIER.test(inner)) {
        // `column "email"`, `'NoneType' object`, a dict key `{'email': ...}`: names, kept.
        const before = whole.slice(Math.max(0, offset - 40), offset);
        const after = whole.slice(offset + literal.length, offset + literal.length + 8);
        if (NAMES_A_THING.test(before) || /^ object\b/.test(after)) return literal;
        if (/[{,]\s*$/.test(before) && /^\s*:(?!:)/.test(after)) return literal;
      }
      return `${quote}${REDACTED}${quote}`;
    })
    .replace(EMAIL, REDACTED)
    .replace(UUID, "<uuid>")
    .replace(DATE_TIME, "<time>")
    .replace(VALUE_NUMBER, "<n>");
}

/**
 * A Python traceback without values: the frame lines (`File "...", line N, in f`) and the source
 * lines under them are code, kept as they are; every other line (exception messages, chained
 * causes, notes) is redacted like a message.
 */
export function redactStacktrace(trace: string): string {
  const lines = trace.split("\n");
  let sourceNext = false;
  return lines
    .map((line) => {
      if (/^\s*File "[^"\n]*", line \d+/.test(line)) {
        sourceNext = true;
        return line;
      }
      const isSource = sourceNext && /^ {4,}\S/.test(line);
      sourceNext = isSource || (sourceNext && /^\s*[~^]+\s*$/.test(line));
      if (isSource || /^\s*[~^]+\s*$/.test(line) || line.startsWith("Traceback (most recent call last)")) return line;
      return redactText(line);
    })
    .join("\n");
}

/** A runtime report's context with every string value redacted; the stack trace by `redactStacktrace`. */
export function redactContext(context: TicketContext): TicketContext {
  const walk = (value: unknown, key: string | null): unknown => {
    if (typeof value === "string") return key === "stacktrace" ? redactStacktrace(redactSecrets(value)) : redactText(redactSecrets(value));
    if (Array.isArray(value)) return value.map((v) => walk(v, null));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    }
    return value;
  };
  return walk(context, null) as TicketContext;
}

/**
 * Secrets never enter tickets, notifications or pages either (docs/threat-model.md): values after
 * a secret-sounding key (`password: ...`, `token=...`, `"api_key": "..."`), bearer tokens, and the
 * values of secret settings this process knows, whatever text they appear in.
 */
const KEYED = /((?:password|passwd|pwd|secret|token|api[_-]?key|authorization)["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;&}\]]+)/gi;
const BEARER = /\b(Bearer\s+)[\w.~+/=-]+/gi;
/** The password of a URL's user info (`postgresql://app:<pw>@db/app`): the user and host classify, the password goes. */
const URL_PASSWORD = /\b([a-z][\w+.-]*:\/\/[^\s:/@'"]*:)[^\s@/'"]+@/gi;
const SECRET_ENV = /(TOKEN|SECRET|PASSWORD|API_KEY)$/;

export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  let out = text.replace(URL_PASSWORD, `$1${REDACTED}@`).replace(BEARER, `$1${REDACTED}`).replace(KEYED, `$1${REDACTED}`);
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= 8 && SECRET_ENV.test(name)) out = out.split(value).join(REDACTED);
  }
  return out;
}

/**
 * What a person typed into a report (a manual report, a validation message sent over HTTP) may
 * name people: e-mail addresses and phone numbers go, besides the secrets.
 */
const PHONE = /(?<![\w.:/-])\+?\d[\d ()-]{6,}\d(?![\w.:/-])/g;
export function redactPersonal(text: string, env: NodeJS.ProcessEnv = process.env): string {
  return redactSecrets(text, env).replace(EMAIL, REDACTED).replace(PHONE, REDACTED);
}

/** `redactSecrets` on every string of a JSON value. */
export function redactValue<T>(value: T, env: NodeJS.ProcessEnv = process.env): T {
  if (typeof value === "string") return redactSecrets(value, env) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, env)) as T;
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, env)])) as T;
  return value;
}

/** `redactPersonal` on every string of a JSON value. */
export function redactPersonalValue<T>(value: T, env: NodeJS.ProcessEnv = process.env): T {
  if (typeof value === "string") return redactPersonal(value, env) as T;
  if (Array.isArray(value)) return value.map((v) => redactPersonalValue(v, env)) as T;
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactPersonalValue(v, env)])) as T;
  return value;
}
