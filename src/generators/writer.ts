import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, posix, resolve } from "node:path";
import type { GeneratedFile } from "./types.js";

export interface WriteOptions {
  /** Report what would change without writing. */
  dryRun?: boolean;
}

export interface WriteResult {
  written: string[];
  unchanged: string[];
}

/**
 * The one place that puts generated files on disk. It refuses paths that would escape the output
 * directory, writes only files whose bytes differ (so watchers and `next build` caches stay warm),
 * and replaces each file atomically through a temporary file.
 */
export function writeFiles(outDir: string, files: readonly GeneratedFile[], options: WriteOptions = {}): WriteResult {
  const root = resolve(outDir);
  const result: WriteResult = { written: [], unchanged: [] };
  for (const f of files) {
    const target = safeJoin(root, f.path);
    let current: string | null = null;
    try {
      current = readFileSync(target, "utf8");
    } catch {
      current = null;
    }
    if (current === f.content) {
      result.unchanged.push(f.path);
      continue;
    }
    result.written.push(f.path);
    if (options.dryRun) continue;
    mkdirSync(dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${process.pid}`;
    writeFileSync(tmp, f.content);
    renameSync(tmp, target);
  }
  return result;
}

/** Files under `outDir` that differ from (or are missing compared with) what would be generated. */
export function checkFiles(outDir: string, files: readonly GeneratedFile[]): string[] {
  return writeFiles(outDir, files, { dryRun: true }).written;
}

/** Reads the files a generator asked for (`dir/` prefixes read every file below that folder). */
export function readExisting(outDir: string, paths: readonly string[]): Map<string, string> {
  const root = resolve(outDir);
  const out = new Map<string, string>();
  const readOne = (rel: string): void => {
    try {
      out.set(rel, readFileSync(safeJoin(root, rel), "utf8"));
    } catch {
      // Absent files are simply not in the map.
    }
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
