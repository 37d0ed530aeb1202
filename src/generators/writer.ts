import { createHash } from "node:crypto";
import {
  type BigIntStats,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, isAbsolute, join, posix, relative, resolve } from "node:path";
import { compareText } from "../shared/text.js";
import { GENERATED_NOTICE } from "./header.js";
import type { GeneratedFile } from "./types.js";

/** The manifest of what charter wrote into an output directory, at its root. */
export const MANIFEST_FILE = ".charter-manifest.json";
const MANIFEST_VERSION = 1;

export interface WriteOptions {
  /** Report what would change without writing or removing anything. */
  dryRun?: boolean;
  /** Overwrite (or remove) generated files even when they were edited by hand. */
  force?: boolean;
  /**
   * The targets this generation covers. Files recorded in the manifest for one of them that the
   * generation no longer produces are stale and removed. Default: the targets of `files`.
   */
  targets?: readonly string[];
}

/** Why a file was left alone. */
export type KeptReason = "edited" | "not-generated";

export interface KeptFile {
  path: string;
  reason: KeptReason;
  /** True when the generation no longer produces the file (it would have been removed). */
  stale: boolean;
}

export interface WriteResult {
  written: string[];
  unchanged: string[];
  /** Stale generated files removed (or, in a dry run, that would be). */
  removed: string[];
  /** Files left alone: edited by hand since charter wrote them, or not charter's at all. */
  kept: KeptFile[];
}

interface ManifestEntry {
  target: string;
  sha256: string;
  permanent?: true;
}

type Manifest = Map<string, ManifestEntry>;

/**
 * What this process last wrote or read at a path: the file's identity (inode, size, mtime and
 * ctime in nanoseconds), its text and the hash of it. A long-running writer (the Healer service
 * regenerating after every fix) then neither reads back nor hashes the hundreds of files whose
 * identity is unchanged: their bytes are the ones it kept. Any write to a file changes its ctime,
 * which no tool sets back (`touch -d` and `utimes` set mtime only), and a replacement changes the
 * inode, so a hand edit is still seen. Known limit: timestamps tick coarsely (a few ms), so an
 * edit of the same size in place within the same tick as charter's own write, or with the system
 * clock moved back, could be missed. The cost is memory: the text of the files written (a few MB).
 */
interface KnownFile {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  text: string;
  sha256: string;
}
const known = new Map<string, KnownFile>();
/** Set CHARTER_WRITER_TRUST_STAT=off to read every file back (the benchmark compares both). */
const trustStat = (): boolean => process.env.CHARTER_WRITER_TRUST_STAT !== "off";

function statOf(abs: string): BigIntStats | undefined {
  return statSync(abs, { bigint: true, throwIfNoEntry: false });
}

function sameFile(k: KnownFile | undefined, st: BigIntStats | undefined): k is KnownFile {
  return (
    k !== undefined &&
    st?.isFile() === true &&
    k.ino === st.ino &&
    k.size === st.size &&
    k.mtimeNs === st.mtimeNs &&
    k.ctimeNs === st.ctimeNs
  );
}

/** Records a file just written or read (`sha` when already known, else computed). */
function remember(abs: string, text: string, sha?: string): void {
  if (!trustStat()) return;
  const st = statOf(abs);
  if (st?.isFile())
    known.set(abs, { ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, text, sha256: sha ?? sha256(text) });
  else known.delete(abs);
}

/** A file's text, from memory while its identity is unchanged; `null` when there is no file. */
function currentOf(abs: string): { text: string; sha256: () => string } | null {
  // A stat first: in a new output folder most paths are absent, and a stat that finds nothing is
  // far cheaper than a read that fails (an exception per file).
  const st = statOf(abs);
  if (st === undefined) {
    known.delete(abs);
    return null;
  }
  if (trustStat()) {
    const k = known.get(abs);
    if (sameFile(k, st)) return { text: k.text, sha256: () => k.sha256 };
  }
  const text = readText(abs);
  if (text === null) {
    known.delete(abs);
    return null;
  }
  let sha: string | undefined;
  const hash = (): string => {
    sha ??= sha256(text);
    return sha;
  };
  remember(abs, text, trustStat() ? hash() : undefined);
  return { text, sha256: hash };
}

/** A path with no file: what was known of it is forgotten. */
function noFile(abs: string): null {
  known.delete(abs);
  return null;
}

/**
 * Whether a directory was absent when first asked about (its parent absent, or nothing at its
 * path): one stat per directory, remembered for the rest of one writeFiles call.
 */
function absentDirs(): (dir: string) => boolean {
  const memo = new Map<string, boolean>();
  const absent = (dir: string): boolean => {
    let answer = memo.get(dir);
    if (answer === undefined) {
      const parent = dirname(dir);
      answer = (parent !== dir && absent(parent)) || statOf(dir) === undefined;
      memo.set(dir, answer);
    }
    return answer;
  };
  return absent;
}

/**
 * The one place that puts generated files on disk. It refuses paths that would escape the output
 * directory, writes only files whose bytes differ (so watchers and `next build` caches stay warm),
 * and replaces each file atomically through a temporary file.
 *
 * It also keeps a manifest of every file it wrote with the hash of its content. With it, a file
 * whose bytes no longer match the hash was edited by hand: it is reported and left alone unless
 * `force`. A file the manifest lists for a target of this run that the run no longer produces is
 * stale and removed, but only when it still carries the `@generated` header and its recorded
 * hash: a user's file is never removed. An `owned` file (an extension point) is written only while
 * absent and then left to the user: never overwritten, removed or reported as edited.
 */
export function writeFiles(outDir: string, files: readonly GeneratedFile[], options: WriteOptions = {}): WriteResult {
  const root = resolve(outDir);
  const manifest = readManifest(root);
  const targets = new Set(options.targets ?? files.flatMap((f) => (f.target ? [f.target] : [])));
  const result: WriteResult = { written: [], unchanged: [], removed: [], kept: [] };
  const produced = new Set<string>();
  const madeDirs = new Set<string>();

  const absent = absentDirs();

  for (const f of files) {
    const target = safeJoin(root, f.path);
    // In a folder absent before this call, a file can only be one this call wrote: a path met for
    // the first time there needs no stat (a new output folder is thousands of them).
    const current = !produced.has(f.path) && absent(dirname(target)) ? noFile(target) : currentOf(target);
    produced.add(f.path);
    if (f.owned) {
      // The user's once it exists; unlisted in the manifest, so never taken for stale either.
      manifest.delete(f.path);
      if (current !== null) {
        result.unchanged.push(f.path);
        continue;
      }
    }
    const entry = manifest.get(f.path);
    if (current !== null && current.text === f.content) {
      result.unchanged.push(f.path);
      if (f.target && !f.owned) manifest.set(f.path, entryOf(f, f.target, current.sha256()));
      continue;
    }
    const hash = sha256(f.content);
    // Files without a target come from callers that keep no manifest: written as before.
    let reason: KeptReason | null = null;
    if (current !== null && f.target) {
      // Ours to replace while its bytes match the manifest; otherwise the header decides.
      reason = entry !== undefined && entry.sha256 === current.sha256() ? null : keptReason(current.text, entry);
    }
    if (reason !== null && !options.force) {
      result.kept.push({ path: f.path, reason, stale: false });
      continue;
    }
    result.written.push(f.path);
    if (f.target && !f.owned) manifest.set(f.path, entryOf(f, f.target, hash));
    if (options.dryRun) continue;
    putFile(target, f.content, current === null, madeDirs);
    remember(target, f.content, hash);
  }

  removeStale(root, manifest, { produced, targets, options, result });

  // An output folder that never held generated files gets no manifest either.
  if (!options.dryRun && (manifest.size > 0 || existsSync(join(root, MANIFEST_FILE)))) writeManifest(root, manifest);
  return result;
}

/**
 * Puts one file on disk. A new file is written directly (nothing to keep intact, so no temporary
 * file: half the system calls); an existing one is replaced atomically through a temporary file.
 */
function putFile(target: string, content: string, isNew: boolean, madeDirs: Set<string>): void {
  if (isNew) {
    const dir = dirname(target);
    if (!madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    writeFileSync(target, content);
  } else {
    const tmp = `${target}.tmp-${process.pid}`;
    writeFileSync(tmp, content);
    renameSync(tmp, target);
  }
}

/**
 * Removes the files the manifest lists for a target of this run that the run no longer produced,
 * when they still carry our header and recorded hash; forgets those that are gone or the user's.
 */
function removeStale(
  root: string,
  manifest: Manifest,
  run: { produced: ReadonlySet<string>; targets: ReadonlySet<string>; options: WriteOptions; result: WriteResult },
): void {
  const { produced, targets, options, result } = run;
  for (const [path, entry] of [...manifest.entries()].sort(([a], [b]) => compareText(a, b))) {
    if (produced.has(path) || entry.permanent || !targets.has(entry.target)) continue;
    const abs = safeJoin(root, path);
    const current = readText(abs);
    if (current === null) {
      manifest.delete(path);
      continue;
    }
    const reason = keptReason(current, entry);
    if (reason === "not-generated" || (reason === "edited" && !options.force)) {
      // A file without our header is the user's now: forget it, never remove it.
      if (reason === "not-generated") manifest.delete(path);
      result.kept.push({ path, reason, stale: true });
      continue;
    }
    result.removed.push(path);
    manifest.delete(path);
    if (!options.dryRun) {
      removeWithEmptyParents(root, abs);
      known.delete(abs);
    }
  }
}

function entryOf(f: GeneratedFile, target: string, hash: string): ManifestEntry {
  return { target, sha256: hash, ...(f.permanent ? { permanent: true as const } : {}) };
}

/** Files under `outDir` that differ from what would be generated, are stale, or were edited. */
export function checkFiles(outDir: string, files: readonly GeneratedFile[], options: Omit<WriteOptions, "dryRun"> = {}): string[] {
  const r = writeFiles(outDir, files, { ...options, dryRun: true });
  return [...r.written, ...r.removed, ...r.kept.map((k) => k.path)].sort();
}

/**
 * Why an existing file must not be overwritten, or null when it is ours to replace. A file the
 * manifest lists is ours while its bytes match the recorded hash; one it does not list (output of
 * a version without manifests) is ours while it carries the header.
 */
function keptReason(current: string, entry: ManifestEntry | undefined): KeptReason | null {
  if (entry === undefined) return hasNotice(current) ? null : "not-generated";
  if (entry.sha256 === sha256(current)) return null;
  return hasNotice(current) ? "edited" : "not-generated";
}

/** Our header is on the first lines of every generated file (inside the first JSON key, too). */
function hasNotice(content: string): boolean {
  return content.slice(0, 400).includes(GENERATED_NOTICE);
}

function sha256(content: string): string {
  return createHash("sha256").update(content).digest("hex");
}

function readText(abs: string): string | null {
  try {
    return readFileSync(abs, "utf8");
  } catch {
    return null;
  }
}

function readManifest(root: string): Manifest {
  const text = currentOf(join(root, MANIFEST_FILE))?.text ?? null;
  const out: Manifest = new Map();
  if (text === null) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${join(root, MANIFEST_FILE)} is not valid JSON; delete it and regenerate`);
  }
  const files = (parsed as { files?: unknown }).files;
  if (typeof files !== "object" || files === null) return out;
  for (const [path, value] of Object.entries(files as Record<string, unknown>)) {
    const v = value as Partial<ManifestEntry>;
    if (typeof v.target !== "string" || typeof v.sha256 !== "string") continue;
    out.set(path, { target: v.target, sha256: v.sha256, ...(v.permanent === true ? { permanent: true as const } : {}) });
  }
  return out;
}

function writeManifest(root: string, manifest: Manifest): void {
  const files: Record<string, ManifestEntry> = {};
  for (const path of [...manifest.keys()].sort()) files[path] = manifest.get(path) as ManifestEntry;
  const text = `${JSON.stringify({ "@generated": GENERATED_NOTICE, version: MANIFEST_VERSION, files }, null, 2)}\n`;
  const path = join(root, MANIFEST_FILE);
  if (currentOf(path)?.text === text) return;
  mkdirSync(root, { recursive: true });
  const tmp = join(root, `${MANIFEST_FILE}.tmp-${process.pid}`);
  writeFileSync(tmp, text);
  renameSync(tmp, path);
  remember(path, text);
}

/** Removes a file, then the folders it leaves empty, up to (not including) the output root. */
function removeWithEmptyParents(root: string, abs: string): void {
  rmSync(abs, { force: true });
  let dir = dirname(abs);
  while (relative(root, dir) !== "" && !relative(root, dir).startsWith("..")) {
    try {
      if (readdirSync(dir).length > 0) return;
      rmdirSync(dir);
    } catch {
      return;
    }
    dir = dirname(dir);
  }
}

/** Reads the files a generator asked for (`dir/` prefixes read every file below that folder). */
export function readExisting(outDir: string, paths: readonly string[]): Map<string, string> {
  const root = resolve(outDir);
  const out = new Map<string, string>();
  const readOne = (rel: string): void => {
    const text = readText(safeJoin(root, rel));
    if (text !== null) out.set(rel, text);
  };
  for (const p of paths) {
    if (!p.endsWith("/")) {
      readOne(p);
      continue;
    }
    const dir = safeJoin(root, p);
    const walk = (abs: string, rel: string): void => {
      let entries: string[];
      try {
        entries = readdirSync(abs).sort();
      } catch {
        return;
      }
      for (const name of entries) {
        const childAbs = join(abs, name);
        const childRel = `${rel}${name}`;
        if (statSync(childAbs).isDirectory()) walk(childAbs, `${childRel}/`);
        else readOne(childRel);
      }
    };
    walk(dir, p);
  }
  return out;
}

/** Joins a generated relative path to the root, refusing absolute paths and `..` escapes. */
export function safeJoin(root: string, rel: string): string {
  if (rel === "" || isAbsolute(rel) || rel.includes("\\") || rel.includes("\0")) {
    throw new Error(`refusing unsafe output path ${JSON.stringify(rel)}`);
  }
  const normal = posix.normalize(rel);
  if (normal.startsWith("../") || normal === ".." || normal.startsWith("/")) {
    throw new Error(`refusing output path outside the output directory: ${JSON.stringify(rel)}`);
  }
  return join(root, normal);
}
