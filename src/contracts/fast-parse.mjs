// @ts-check
/**
 * The fast parse of a contract file: file to bytes, bytes to text, text to its plain value with js-yaml, and the
 * checks that send anything unusual to the located parse (loader.ts), which owns every message.
 *
 * Plain JavaScript, because two threads run it: the loader, and the reader thread
 * (reader-thread.mjs) that parses files ahead of it. A module file a thread can load by URL must
 * run as it is from dist/, from the TypeScript sources under tsx, and inside the test runner; only
 * JavaScript does all three. tsc checks it (checkJs) and copies it into dist/.
 */
import { isUtf8 } from "node:buffer";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { FAILSAFE_SCHEMA, load, Type } from "js-yaml";

/**
 * Deepest nesting of mappings and sequences a contract may have. Real contracts are under ten
 * levels; a limit keeps every recursive stage (parser, validator, compiler) far from the stack's end,
 * so a hostile or broken file gets a finding instead of "Maximum call stack size exceeded".
 */
export const MAX_NESTING_DEPTH = 64;

/**
 * A contract file's bytes through one open, fstat, read and close (a domain of 10,000 entities has
 * 15,000 files, and a stat by path before a read of the same path was one system call per file too
 * many); its size, unread, when that is over `maxBytes`. Throws as the file system does.
 * @param {string} path
 * @param {number} maxBytes
 * @returns {Buffer | number}
 */
export function readContractBytes(path, maxBytes) {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) return size;
    const bytes = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const n = readSync(fd, bytes, filled, size - filled, null);
      if (n === 0) break;
      filled += n;
    }
    return filled < size ? bytes.subarray(0, filled) : bytes;
  } finally {
    closeSync(fd);
  }
}

/**
 * UTF-8 bytes to text as TextDecoder("utf-8", { fatal: true }) decodes them: invalid bytes
 * refused (null), a leading byte order mark dropped.
 * @param {Uint8Array} bytes
 * @returns {string | null}
 */
export function decodeContractText(bytes) {
  if (!isUtf8(bytes)) return null;
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8", bom);
}

/**
 * Where flow brackets (`[`, `{`) first nest past the limit, found by a scan of the text (quoted
 * scalars and comments skipped), before any parser recurses into them.
 * @param {string} source
 * @returns {{ line: number; column: number } | null}
 */
export function deepFlow(source) {
  if (!opensAtLeast(source, MAX_NESTING_DEPTH + 1)) return null;
  let depth = 0;
  let line = 1;
  let column = 0;
  let quote = "";
  let comment = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    column++;
    if (c === "\n") {
      line++;
      column = 0;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(source[i - 1] ?? ""))) comment = true;
    else if (c === "[" || c === "{") {
      depth++;
      if (depth > MAX_NESTING_DEPTH) return { line, column };
    } else if ((c === "]" || c === "}") && depth > 0) depth--;
  }
  return null;
}

/**
 * Whether the text holds at least `n` opening brackets: fewer cannot nest deeper than n - 1, and
 * counting them with indexOf is a small part of scanning every character (a contract holds a few).
 * @param {string} source
 * @param {number} n
 */
function opensAtLeast(source, n) {
  let count = 0;
  for (const bracket of ["[", "{"]) {
    for (let i = source.indexOf(bracket); i !== -1; i = source.indexOf(bracket, i + 1)) if (++count >= n) return true;
  }
  return false;
}

/**
 * Nesting depth of a plain value, computed without recursion.
 * @param {unknown} value
 * @returns {number}
 */
export function nestingDepth(value) {
  let max = 0;
  /** @type {[unknown, number][]} */
  const stack = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = /** @type {[unknown, number]} */ (stack.pop());
    if (v === null || typeof v !== "object") continue;
    if (d + 1 > max) max = d + 1;
    if (max > MAX_NESTING_DEPTH) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/**
 * @param {string} name
 * @param {(s: string) => boolean} may a cheap test that lets through every text `test` accepts: js-yaml
 *   tries each type on every plain scalar, and most scalars (names, types, paths) fail all four
 * @param {RegExp} test
 * @param {(s: string) => unknown} construct
 */
function scalarType(name, may, test, construct) {
  return new Type(`tag:yaml.org,2002:${name}`, {
    kind: "scalar",
    resolve: (/** @type {string | null} */ s) => may(s ?? "") && test.test(s ?? ""),
    construct: (/** @type {string | null} */ s) => construct(s ?? ""),
  });
}

/** @param {string} s */
const numeric = (s) => {
  const c = s.charCodeAt(0);
  return (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46; // 0-9 + - .
};

/**
 * YAML 1.2's core schema exactly as the `yaml` package resolves plain scalars (its tests, in its
 * order), so the fast path and the located parse give the same value for every scalar. js-yaml's
 * own CORE_SCHEMA is not quite it: it reads `0b101`, `-0x1` and `+0o7` as numbers where YAML 1.2
 * (and the `yaml` package) keeps them strings.
 */
const CORE_1_2 = FAILSAFE_SCHEMA.extend({
  implicit: [
    scalarType(
      "null",
      (s) => s.length <= 1 || s.length === 4,
      /^(?:~|[Nn]ull|NULL)?$/,
      () => null,
    ),
    scalarType(
      "bool",
      (s) => s.length === 4 || s.length === 5,
      /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
      (s) => s[0] === "t" || s[0] === "T",
    ),
    scalarType("int", numeric, /^(?:0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+)$/, (s) =>
      s.startsWith("0o") ? Number.parseInt(s.slice(2), 8) : s.startsWith("0x") ? Number.parseInt(s.slice(2), 16) : Number.parseInt(s, 10),
    ),
    scalarType(
      "float",
      numeric,
      /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))$/,
      (s) =>
        s.endsWith("nan") || s.endsWith("NaN") || s.endsWith("NAN")
          ? Number.NaN
          : s.includes("nf") || s.includes("NF")
            ? s[0] === "-"
              ? Number.NEGATIVE_INFINITY
              : Number.POSITIVE_INFINITY
            : Number.parseFloat(s),
    ),
  ],
});

/**
 * Keys the two parsers turn into different strings, left to the located parse: a collection as a
 * key (js-yaml joins `[a, b]` into "a,b", `yaml` writes "[ a, b ]"), found by its `?` indicator or
 * a closing bracket before the colon (a quoted text that looks like one only costs the slow path).
 */
const COLLECTION_KEY = /(?:^[ \t-]*\?(?:[ \t]|$))|(?:[\]}][ \t]*:(?:[ \t]|$))/m;

/**
 * A null key (`~:`, `null:`) is "null" to js-yaml and "" to `yaml`; the located parse decides.
 * @param {object} value
 */
function hasNullKey(value) {
  /** @type {object[]} */
  const stack = [value];
  while (stack.length > 0) {
    const v = /** @type {object} */ (stack.pop());
    if (Array.isArray(v)) {
      for (const child of v) if (child !== null && typeof child === "object") stack.push(child);
      continue;
    }
    for (const key in v) {
      if (key === "null") return true;
      const child = /** @type {Record<string, unknown>} */ (v)[key];
      if (child !== null && typeof child === "object") stack.push(child);
    }
  }
  return false;
}

/**
 * The fast path for the common case, a well-formed contract: js-yaml builds the plain value many
 * times faster than a position-keeping parse. Anything unusual returns undefined and takes
 * the full path, which owns every error message: a parse error, a document that is not a mapping,
 * and any anchor (`&`), so that alias expansion is always bounded by the loader's limit.
 * @param {string} source
 * @returns {Record<string, unknown> | undefined}
 */
export function fastParse(source) {
  if (source.includes("&") || COLLECTION_KEY.test(source)) return undefined;
  /** @type {unknown} */
  let value;
  try {
    value = load(source, { schema: CORE_1_2 });
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value) || hasNullKey(value)) return undefined;
  return /** @type {Record<string, unknown>} */ (value);
}

/**
 * What the reader thread parses for the loader: the plain value of a contract that takes the fast
 * path and nests within the limit, and that JSON carries across threads unchanged (no NaN, no
 * infinity, no -0, which JSON turns into null and 0); undefined for anything else, which the
 * loader then parses itself, with its messages.
 * @param {string} source
 * @returns {Record<string, unknown> | undefined}
 */
export function parseAhead(source) {
  if (deepFlow(source)) return undefined;
  const value = fastParse(source);
  return value !== undefined && plainJson(value) ? value : undefined;
}

/**
 * Whether a value nests within the limit and holds only numbers that JSON keeps exactly.
 * @param {unknown} value
 */
function plainJson(value) {
  /** @type {[unknown, number][]} */
  const stack = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = /** @type {[unknown, number]} */ (stack.pop());
    if (typeof v === "number") {
      if (!Number.isFinite(v) || Object.is(v, -0)) return false;
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (d + 1 > MAX_NESTING_DEPTH) return false;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return true;
}
