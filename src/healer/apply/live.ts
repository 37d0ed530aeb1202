import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { DiffRecord } from "../types.js";
import { writeFileAtomic } from "./atomic.js";

/**
 * `.forge/live.json`: when an applied fix became live. `charter dev` writes it after the backend it
 * restarted serves the fixed contracts; the ticket view reads it to say "live since ...". The
 * Healer alone cannot know: it rewrites contracts, whoever runs the app restarts it.
 */
export interface LiveRecord {
  /** Diff record id -> ISO time the running app first served it. */
  diffs: Record<string, string>;
}

export function livePath(forgeDir: string): string {
  return join(forgeDir, "live.json");
}

export function readLive(forgeDir: string): LiveRecord {
  try {
    const data = JSON.parse(readFileSync(livePath(forgeDir), "utf8")) as Partial<LiveRecord>;
    return { diffs: data.diffs && typeof data.diffs === "object" ? data.diffs : {} };
  } catch {
    return { diffs: {} };
  }
}

/**
 * Marks as live, at `at`, every applied fix whose files read exactly as the running app was
 * generated from (`served`: absolute path -> contract text). A fix written after that read is
 * left for the next restart, which its own file event triggers. Returns the ids marked.
 */
export function markLive(root: string, forgeDir: string, served: ReadonlyMap<string, string>, at: string): string[] {
  const live = readLive(forgeDir);
  let names: string[];
  try {
    names = readdirSync(join(forgeDir, "diffs")).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const marked: string[] = [];
  for (const name of names) {
    const id = name.slice(0, -".json".length);
    if (live.diffs[id]) continue;
    let record: DiffRecord;
    try {
      record = JSON.parse(readFileSync(join(forgeDir, "diffs", name), "utf8")) as DiffRecord;
    } catch {
      continue;
    }
    if (record.files.every((f) => served.get(resolve(root, f.file)) === f.after)) {
      live.diffs[id] = at;
      marked.push(id);
    }
  }
  if (marked.length > 0) writeFileAtomic(livePath(forgeDir), `${JSON.stringify(live, null, 2)}\n`);
  return marked;
}
