import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { type Document, LineCounter, parseAllDocuments, parseDocument } from "yaml";
import { compareText } from "../shared/text.js";
import { decodeContractText, deepFlow, fastParse, MAX_NESTING_DEPTH, nestingDepth, readContractBytes } from "./fast-parse.mjs";
import type { Finding } from "./findings.js";
import { ReadAhead } from "./read-ahead.js";

export { MAX_NESTING_DEPTH };

/** Files larger than this are refused unread: a contract is a page of YAML, never megabytes. */
export const MAX_CONTRACT_BYTES = 1024 * 1024;
/** Alias expansions allowed per file; a "billion laughs" file trips this instead of exhausting memory. */
export const MAX_ALIAS_COUNT = 50;
export const CONTRACT_SUFFIX = ".contract.yaml";
/**
 * From this many files a second thread reads and parses part of them (see ReadAhead); this thread
 * claims the first batches itself while that one starts. Below, a thread would not win back its
 * start (a few tens of milliseconds).
 */
const READ_AHEAD_FROM = 1000;

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
  options.cache?.prune(resolve(path), files);
  // Each file's display name once: it is the contract's `file` and the listing's entry alike.
  const shown = files.map(displayPath);
  const results: ParseResult[] = new Array(files.length);
  const here = (i: number): ParseResult => {
    const absPath = files[i] as string;
    return loadContractFile(absPath, options.cache, shown[i], options.sources?.get(absPath) ?? readContractText(absPath));
  };
  // With many files a second thread reads and parses batches of them while this one does the
  // same; this one then takes the other's results. With a cache it only reads: unchanged files
  // are not parsed again at all.
  const ahead = files.length >= READ_AHEAD_FROM ? startReadAhead(files, !options.cache) : null;
  if (ahead) {
    for (let batch = ahead.claim(); batch; batch = ahead.claim()) {
      for (let i = batch.start; i < batch.end; i++) results[i] = here(i);
    }
  }
  const contracts: LoadedContract[] = [];
  const findings: Finding[] = [];
  for (let i = 0; i < files.length; i++) {
    const result = results[i] ?? (ahead ? fromThread(ahead, i, files[i] as string, shown[i] as string, options) : here(i));
    if ("contract" in result) contracts.push(result.contract);
    for (const f of result.findings) findings.push(f);
  }
  return { contracts, findings, files: shown };
}

/** A file the reader thread took: its parse when it made one, else the file parsed here. */
function fromThread(ahead: ReadAhead, i: number, absPath: string, file: string, options: LoadOptions): ParseResult {
  const r = ahead.take(i);
  const unsaved = options.sources?.get(absPath);
  if (unsaved !== undefined) return loadContractFile(absPath, options.cache, file, unsaved);
  if ("bytes" in r) {
    const text = decodeContractText(r.bytes);
    if (r.value && text !== null) return { contract: lazyContract(file, absPath, text, r.value), findings: [] };
    return loadContractFile(absPath, options.cache, file, text);
  }
  if ("tooLarge" in r) return loadContractFile(absPath, options.cache, file, r.tooLarge);
  return loadContractFile(absPath, options.cache, file);
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

/** Reads a contract file (readContractBytes) and decodes it. */
function readContractText(absPath: string): ContractText {
  const bytes = readContractBytes(absPath, MAX_CONTRACT_BYTES);
  return typeof bytes === "number" ? bytes : decodeContractText(bytes);
}

/** A reader thread, or null where none can be started (every file is then read in place). */
function startReadAhead(paths: readonly string[], parse: boolean): ReadAhead | null {
  try {
    return new ReadAhead(paths, MAX_CONTRACT_BYTES, { parse });
  } catch {
    return null;
  }
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
