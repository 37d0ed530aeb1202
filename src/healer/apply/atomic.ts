import { closeSync, fsyncSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Replaces a file so that a reader (or a crash) sees either the whole old content or the whole new
 * one, never a mix: write a temporary file beside it, fsync it, rename it over the target, fsync
 * the directory so the rename itself is durable. The temporary name starts with a dot and does not
 * end in `.contract.yaml`, so the contract loader never picks up a half-written one.
 */
export function writeFileAtomic(path: string, content: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.healer-${process.pid}.tmp`);
  const fd = openSync(tmp, "w", 0o644);
  try {
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDir(dirname(path));
}

function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Removes temporary files left by a writer that was killed before its rename. */
export function removeStaleTemps(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^\..+\.healer-(\d+)\.tmp$/.exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch {
      try {
        unlinkSync(join(dir, name));
      } catch {
        // Already gone.
      }
    }
  }
}
