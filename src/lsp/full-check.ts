import { parentPort } from "node:worker_threads";
import { checkDomain } from "../compiler/compile-path.js";
import { type Finding, ParseCache } from "../contracts/index.js";

/**
 * The full check of the domain, in a worker thread so that the editor's edits are never queued
 * behind it: exactly `charter forge validate`'s checkDomain, with the unsaved texts as sources.
 * Its own ParseCache keeps every later run to the files that changed.
 */
export interface FullCheckRequest {
  id: number;
  root: string;
  sources: [string, string][];
}

export interface FullCheckReply {
  id: number;
  findings: Finding[];
  error?: string;
}

const cache = new ParseCache();

parentPort?.on("message", (req: FullCheckRequest) => {
  try {
    const result = checkDomain(req.root, { cache, sources: new Map(req.sources) });
    parentPort?.postMessage({ id: req.id, findings: result.findings } satisfies FullCheckReply);
  } catch (e) {
    parentPort?.postMessage({ id: req.id, findings: [], error: e instanceof Error ? e.message : String(e) } satisfies FullCheckReply);
  }
});
