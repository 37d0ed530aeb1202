import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { expect } from "vitest";

export const UPDATE_GOLDEN = process.env.UPDATE_GOLDEN === "1";

/**
 * Compares generated files with the golden copies under `dir` (same relative paths, real
 * extensions, so real tools can check them). With UPDATE_GOLDEN=1 the folder is rewritten instead.
 * Extra or missing golden files fail too.
 */
export function expectGolden(dir: string, files: readonly { path: string; content: string }[]): void {
  if (UPDATE_GOLDEN) {
    rmSync(dir, { recursive: true, force: true });
    for (const f of files) {
      const p = join(dir, f.path);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, f.content);
    }
    return;
  }
  const onDisk = listFiles(dir);
  expect([...files.map((f) => f.path)].sort()).toEqual(onDisk);
  for (const f of files) {
    expect(f.content, `golden ${f.path}`).toBe(readFileSync(join(dir, f.path), "utf8"));
  }
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const name of entries) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p).split("\\").join("/"));
    }
  };
  walk(dir);
  return out.sort();
}
