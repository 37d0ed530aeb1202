// @ts-check
/**
 * The reader thread of read-ahead.ts. It claims batches of files from a counter it shares with the
 * loader's thread (both take the next unclaimed batch, so the work splits itself by speed), reads
 * each file as the loader would (readContractBytes), and, when asked, parses it as far as the fast
 * path goes (fast-parse.mjs). Each batch is one message: the bytes of its files in one transferred
 * buffer, and the parsed values as one JSON text, which the other thread turns back into values
 * faster than it could parse the YAML.
 */
import { workerData } from "node:worker_threads";
import { decodeContractText, parseAhead, readContractBytes } from "./fast-parse.mjs";

/** @type {{ paths: string[]; maxBytes: number; parse: boolean; batch: number; port: import("node:worker_threads").MessagePort; counters: Int32Array }} */
const { paths, maxBytes, parse, batch, port, counters } = workerData;

/** @param {Uint8Array} bytes */
function parsed(bytes) {
  const text = decodeContractText(bytes);
  return text === null ? null : (parseAhead(text) ?? null);
}

/**
 * One batch as a message. A batch that fails as a whole (a bug, not a file: those fail one by
 * one) is posted with every file failed, which the loader then reads itself, rather than left
 * for the loader to wait on.
 * @param {number} b
 * @param {string[]} batchPaths
 */
function post(b, batchPaths) {
  try {
    const { buffer, ends, values } = readBatch(batchPaths);
    port.postMessage({ b, buffer, ends, values }, [buffer]);
  } catch {
    port.postMessage({ b, buffer: new ArrayBuffer(0), ends: batchPaths.map(() => -1), values: null });
  }
}

/** @param {string[]} batchPaths */
function readBatch(batchPaths) {
  /** @type {Uint8Array[]} */
  const parts = [];
  /** @type {number[]} */
  const ends = [];
  /** @type {unknown[]} */
  const values = [];
  let total = 0;
  for (const path of batchPaths) {
    /** @type {Buffer | number | null} */
    let r;
    try {
      r = readContractBytes(path, maxBytes);
    } catch {
      r = null;
    }
    if (r === null) ends.push(-1);
    else if (typeof r === "number") ends.push(-2 - r);
    else {
      parts.push(r);
      total += r.length;
      ends.push(total);
    }
    if (parse) values.push(r !== null && typeof r !== "number" ? parsed(r) : null);
  }
  const buffer = new ArrayBuffer(total);
  const view = new Uint8Array(buffer);
  let at = 0;
  for (const p of parts) {
    view.set(p, at);
    at += p.length;
  }
  return { buffer, ends, values: parse ? JSON.stringify(values) : null };
}

for (;;) {
  // counters[0]: the next batch to claim; counters[1]: batches this thread has posted.
  const b = Atomics.add(counters, 0, 1);
  const first = b * batch;
  if (first >= paths.length) break;
  post(b, paths.slice(first, first + batch));
  Atomics.add(counters, 1, 1);
  Atomics.notify(counters, 1);
}
port.close();
