import { isUtf8 } from "node:buffer";
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { FAILSAFE_SCHEMA, load as fastLoad, Type } from "js-yaml";
import { type Document, LineCounter, parseAllDocuments, parseDocument } from "yaml";
import { compareText } from "../shared/text.js";
import type { Finding } from "./findings.js";
import { ReadAhead, type ReadAheadResult } from "./read-ahead.js";

/** Files larger than this are refused unread: a contract is a page of YAML, never megabytes. */
export const MAX_CONTRACT_BYTES = 1024 * 1024;
/** Alias expansions allowed per file; a "billion laughs" file trips this instead of exhausting memory. */
export const MAX_ALIAS_COUNT = 50;
export const CONTRACT_SUFFIX = ".contract.yaml";
/**
 * Deepest nesting of mappings and sequences a contract may have. Real contracts are under ten
 * levels; a limit keeps every recursive stage (parser, validator, compiler) far from the stack's end,
 * so a hostile or broken file gets a finding instead of "Maximum call stack size exceeded".
 */
export const MAX_NESTING_DEPTH = 64;
/**
 * From this many files a reader thread reads ahead of the parser (see ReadAhead); this thread reads
 * the first READ_HEAD itself meanwhile, which covers the few tens of milliseconds a thread takes to
 * start. Below, a thread would not win back its start.
 */
const READ_AHEAD_FROM = 1000;
const READ_HEAD = 400;

/** One contract file, parsed, with what is needed to point back into its source. */
export interface LoadedContract {
  /** Path as shown to users: relative to the current directory when the file lies below it. */
  file: string;
  absPath: string;
  source: string;
  /** The YAML document with source positions; parsed on first use (only findings and edits need it). */
  readonly doc: Document;
  readonly lineCounter: LineCounter;
  /** Plain JSON value of the document (a mapping; anything else is refused by the loader). */
  data: Record<string, unknown>;
}

export interface LoadResult {
  contracts: LoadedContract[];
  findings: Finding[];
  /** Every contract file found, including those refused, in a stable order. */
  files: string[];
}

/** Lists every `*.contract.yaml` under `path` (recursively), or `path` itself when it is a file. */
export function findContractFiles(path: string): string[] {
  const st = statSync(path);
  if (st.isFile()) return [path];
  const out: string[] = [];
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name));
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && e.name.endsWith(CONTRACT_SUFFIX)) out.push(full);
    }
  };
  walk(path);
  return out;
}

/**
 * Loads every contract under `path`. Broken files never stop the load: each becomes a located
 * finding and the rest are still parsed, so one run reports every problem.
 */
export function loadContracts(path: string, options: LoadOptions = {}): LoadResult {
  const files = findContractFiles(path);
  const contracts: LoadedContract[] = [];
  const findings: Finding[] = [];
  options.cache?.prune(resolve(path), files);
  // A thread reads the files after the first READ_HEAD while this one reads those and parses.
  const ahead = files.length >= READ_AHEAD_FROM ? startReadAhead(files.slice(READ_HEAD)) : null;
  // Each file's display name once: it is the contract's `file` and the listing's entry alike.
  const shown = files.map(displayPath);
  files.forEach((absPath, i) => {
    const fromDisk = ahead && i >= READ_HEAD ? textOf(ahead.next(), absPath) : undefined;
    const read = options.sources?.get(absPath) ?? fromDisk ?? readContractText(absPath);
    const result = loadContractFile(absPath, options.cache, shown[i], read);
    if ("contract" in result) contracts.push(result.contract);
    for (const f of result.findings) findings.push(f);
  });
  return { contracts, findings, files: shown };
}

export interface LoadOptions {
  cache?: ParseCache | undefined;
  /**
   * Texts that stand in for files on disk, by absolute path: an editor's unsaved buffers, which the
   * language server checks exactly as `validate` would check them saved.
   */
  sources?: ReadonlyMap<string, string> | undefined;
}

export function displayPath(absPath: string): string {
  const rel = relative(process.cwd(), absPath);
  return rel && !rel.startsWith("..") ? rel : absPath;
}

export type ParseResult = { contract: LoadedContract; findings: Finding[] } | { findings: Finding[] };

/**
 * Parsed contracts kept between loads of the same files, for a long-running process (the Healer
 * checks its whole domain several times per fix). An entry is used only when the file holds
 * exactly the bytes it was parsed from and is shown under the same name, so any edit, by the
 * Healer or by anyone else, is parsed afresh; no timestamp is trusted. Entries are shared, so
 * what they hold is read-only for every caller.
 */
export class ParseCache {
  private readonly entries = new Map<string, { source: string; file: string; result: ParseResult }>();
  private readonly schema = new WeakMap<LoadedContract, readonly Finding[]>();

  lookup(absPath: string, source: string, file: string): ParseResult | undefined {
    const e = this.entries.get(absPath);
    return e && e.source === source && e.file === file ? e.result : undefined;
  }

  store(absPath: string, source: string, file: string, result: ParseResult): void {
    this.entries.set(absPath, { source, file, result });
  }

  /** Schema findings of a cached contract, computed once per parse. */
  schemaFindings(contract: LoadedContract, validate: (c: LoadedContract) => readonly Finding[]): readonly Finding[] {
    let found = this.schema.get(contract);
    if (!found) {
      found = validate(contract);
      this.schema.set(contract, found);
    }
    return found;
  }

  /** Forgets the files below `root` that a listing no longer holds (removed contracts). */
  prune(root: string, present: readonly string[]): void {
    const keep = new Set(present);
    for (const path of this.entries.keys()) {
      if ((path === root || path.startsWith(`${root}${sep}`)) && !keep.has(path)) this.entries.delete(path);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Loads one contract file. `read` is its text as readContractText gives it, when the caller has
 * read it already.
 */
export function loadContractFile(
  absPath: string,
  cache?: ParseCache,
  file: string = displayPath(absPath),
  read: ContractText = readContractText(absPath),
): ParseResult {
  const fail = (code: string, message: string, line = 0, column = 0): { findings: Finding[] } => ({
    findings: [{ code, message, file, line, column, path: "", schemaPath: "", severity: "error" }],
  });
  if (typeof read === "number") {
    return fail("file.too_large", `file is ${read} bytes, over the limit of ${MAX_CONTRACT_BYTES} bytes`);
  }
  if (read === null) return fail("file.encoding", "file is not valid UTF-8");
  const source = read;
  if (!cache) return parseContractSource(source, absPath, file);
  const cached = cache.lookup(absPath, source, file);
  if (cached) return cached;
  const parsed = parseContractSource(source, absPath, file);
  cache.store(absPath, source, file, parsed);
  return parsed;
}

/** A contract file's text; its size in bytes when over MAX_CONTRACT_BYTES (left unread); null when it is not UTF-8. */
type ContractText = string | number | null;

/**
 * Reads a contract file: one open, fstat, read and close (a domain of 10,000 entities has 15,000
 * files, and a stat by path before a read of the same path was one system call per file too many).
 */
function readContractText(absPath: string): ContractText {
  const fd = openSync(absPath, "r");
  let bytes: Buffer;
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_CONTRACT_BYTES) return size;
    bytes = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const n = readSync(fd, bytes, filled, size - filled, null);
      if (n === 0) break;
      filled += n;
    }
    if (filled < size) bytes = bytes.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
  return decodeContractText(bytes);
}

/**
 * UTF-8 bytes to text as TextDecoder("utf-8", { fatal: true }) decodes them: invalid bytes
 * refused (null), a leading byte order mark dropped.
 */
function decodeContractText(bytes: Uint8Array): string | null {
  if (!isUtf8(bytes)) return null;
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8", bom);
}

/** A reader thread, or null where none can be started (every file is then read in place). */
function startReadAhead(paths: readonly string[]): ReadAhead | null {
  try {
    return new ReadAhead(paths, MAX_CONTRACT_BYTES);
  } catch {
    return null;
  }
}

/** The text of what the reader thread found; a file it could not read is read here, to fail as it would. */
function textOf(r: ReadAheadResult, absPath: string): ContractText {
  if ("bytes" in r) return decodeContractText(r.bytes);
  if ("tooLarge" in r) return r.tooLarge;
  return readContractText(absPath);
}

type FindingAt = (code: string, message: string, line?: number, column?: number) => Finding;

/** A parse's findings, all errors located in `file`. */
function findingIn(file: string): FindingAt {
  return (code, message, line = 0, column = 0) => ({
    code,
    message,
    file,
    line,
    column,
    path: "",
    schemaPath: "",
    severity: "error",
  });
}

function tooDeep(finding: FindingAt, line = 0, column = 0): { findings: Finding[] } {
  return {
    findings: [
      finding(
        "yaml.too_deep",
        `YAML nests deeper than ${MAX_NESTING_DEPTH} levels; a contract is a few levels deep (is a bracket left open?)`,
        line,
        column,
      ),
    ],
  };
}

/** Parses contract text; used by the loader and by tools that check a contract before writing it. */
export function parseContractSource(source: string, absPath: string, file: string = displayPath(absPath)): ParseResult {
  const finding = findingIn(file);
  const flow = deepFlow(source);
  if (flow) return tooDeep(finding, flow.line, flow.column);
  const fast = fastParse(source);
  if (fast) {
    if (nestingDepth(fast) > MAX_NESTING_DEPTH) return tooDeep(finding);
    return { contract: lazyContract(file, absPath, source, fast), findings: [] };
  }
  return locatedParse(source, absPath, file, finding);
}

/**
 * The position-keeping parse, for whatever the fast path declined: it owns every message about
 * broken YAML, several documents, a document that is not a mapping and alias expansion.
 */
function locatedParse(source: string, absPath: string, file: string, finding: FindingAt): ParseResult {
  const lineCounter = new LineCounter();
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    docs = parseAllDocuments(source, { lineCounter, uniqueKeys: true, prettyErrors: false });
  } catch (e) {
    if (e instanceof RangeError) return tooDeep(finding);
    throw e;
  }
  if (!Array.isArray(docs) || docs.length === 0) return { findings: [finding("yaml.empty", "file holds no YAML document")] };
  const syntax: Finding[] = [];
  for (const d of docs) {
    for (const e of d.errors) {
      const pos = lineCounter.linePos(e.pos[0]);
      const code = e.code === "DUPLICATE_KEY" ? "yaml.duplicate_key" : "yaml.syntax";
      syntax.push(finding(code, firstLine(e.message), pos.line, pos.col));
    }
  }
  if (syntax.length > 0) return { findings: syntax };
  if (docs.length > 1) {
    const second = docs[1] as Document;
    const pos = lineCounter.linePos(second.range?.[0] ?? 0);
    const message = `file holds ${docs.length} YAML documents; a contract file holds exactly one`;
    return { findings: [finding("yaml.multiple_documents", message, pos.line, pos.col)] };
  }
  const doc = docs[0] as Document;
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    if (e instanceof RangeError) return tooDeep(finding);
    const message = e instanceof Error ? e.message : String(e);
    if (/alias/i.test(message)) {
      return { findings: [finding("yaml.alias_limit", `alias expansion exceeds the limit of ${MAX_ALIAS_COUNT}`)] };
    }
    return { findings: [finding("yaml.syntax", firstLine(message))] };
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    const pos = lineCounter.linePos(doc.contents?.range?.[0] ?? 0);
    const what = data === null || data === undefined ? "empty" : Array.isArray(data) ? "a sequence" : `a ${typeof data}`;
    return { findings: [finding("yaml.not_mapping", `contract must be a mapping, found ${what}`, pos.line, pos.col)] };
  }
  if (nestingDepth(data) > MAX_NESTING_DEPTH) return tooDeep(finding);
  return { contract: lazyContract(file, absPath, source, data as Record<string, unknown>, { doc, lineCounter }), findings: [] };
}

/**
 * Where flow brackets (`[`, `{`) first nest past the limit, found by a scan of the text (quoted
 * scalars and comments skipped), before any parser recurses into them.
 */
function deepFlow(source: string): { line: number; column: number } | null {
  if (!source.includes("[") && !source.includes("{")) return null;
  let depth = 0;
  let line = 1;
  let column = 0;
  let quote = "";
  let comment = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
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
    else if (c === "#" && (i === 0 || /\s/.test(source[i - 1] as string))) comment = true;
    else if (c === "[" || c === "{") {
      depth++;
      if (depth > MAX_NESTING_DEPTH) return { line, column };
    } else if ((c === "]" || c === "}") && depth > 0) depth--;
  }
  return null;
}

/** Nesting depth of a plain value, computed without recursion. */
function nestingDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== "object") continue;
    if (d + 1 > max) max = d + 1;
    if (max > MAX_NESTING_DEPTH) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/**
 * YAML 1.2's core schema exactly as the `yaml` package resolves plain scalars (its tests, in its
 * order), so the fast path and the located parse give the same value for every scalar. js-yaml's
 * own CORE_SCHEMA is not quite it: it reads `0b101`, `-0x1` and `+0o7` as numbers where YAML 1.2
 * (and the `yaml` package) keeps them strings.
 */
const CORE_1_2 = FAILSAFE_SCHEMA.extend({
  implicit: [
    scalarType("null", /^(?:~|[Nn]ull|NULL)?$/, () => null),
    scalarType("bool", /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (s) => s[0] === "t" || s[0] === "T"),
    scalarType("int", /^(?:0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+)$/, (s) =>
      s.startsWith("0o") ? Number.parseInt(s.slice(2), 8) : s.startsWith("0x") ? Number.parseInt(s.slice(2), 16) : Number.parseInt(s, 10),
    ),
    scalarType(
      "float",
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

function scalarType(name: string, test: RegExp, construct: (s: string) => unknown): Type {
  return new Type(`tag:yaml.org,2002:${name}`, {
    kind: "scalar",
    resolve: (s: string | null) => test.test(s ?? ""),
    construct: (s: string | null) => construct(s ?? ""),
  });
}

/**
 * The fast path for the common case, a well-formed contract: js-yaml builds the plain value many
 * times faster than a position-keeping parse. Anything unusual returns undefined and takes
 * the full path, which owns every error message: a parse error, a document that is not a mapping,
 * and any anchor (`&`), so that alias expansion is always bounded by MAX_ALIAS_COUNT.
 */
function fastParse(source: string): Record<string, unknown> | undefined {
  if (source.includes("&") || COLLECTION_KEY.test(source)) return undefined;
  let value: unknown;
  try {
    value = fastLoad(source, { schema: CORE_1_2 });
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value) || hasNullKey(value)) return undefined;
  return value as Record<string, unknown>;
}

/**
 * Keys the two parsers turn into different strings, left to the located parse: a collection as a
 * key (js-yaml joins `[a, b]` into "a,b", `yaml` writes "[ a, b ]"), found by its `?` indicator or
 * a closing bracket before the colon (a quoted text that looks like one only costs the slow path).
 */
const COLLECTION_KEY = /(?:^[ \t-]*\?(?:[ \t]|$))|(?:[\]}][ \t]*:(?:[ \t]|$))/m;

/** A null key (`~:`, `null:`) is "null" to js-yaml and "" to `yaml`; the located parse decides. */
function hasNullKey(value: object): boolean {
  const stack: object[] = [value];
  while (stack.length > 0) {
    const v = stack.pop() as object;
    if (Array.isArray(v)) {
      for (const child of v) if (child !== null && typeof child === "object") stack.push(child);
      continue;
    }
    for (const key in v) {
      if (key === "null") return true;
      const child = (v as Record<string, unknown>)[key];
      if (child !== null && typeof child === "object") stack.push(child);
    }
  }
  return false;
}

function lazyContract(
  file: string,
  absPath: string,
  source: string,
  data: Record<string, unknown>,
  parsed?: { doc: Document; lineCounter: LineCounter },
): LoadedContract {
  let cache = parsed;
  const positions = (): { doc: Document; lineCounter: LineCounter } => {
    if (!cache) {
      const lineCounter = new LineCounter();
      cache = { doc: parseDocument(source, { lineCounter, uniqueKeys: true }), lineCounter };
    }
    return cache;
  };
  return {
    file,
    absPath,
    source,
    data,
    get doc() {
      return positions().doc;
    },
    get lineCounter() {
      return positions().lineCounter;
    },
  };
}

function firstLine(message: string): string {
  return message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "") ?? message;
}
