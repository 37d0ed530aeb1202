import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";

/** The thread's module, beside this one in src/ and in dist/ alike. */
const READER = new URL("./reader-thread.mjs", import.meta.url);

/**
 * What the reader thread found at a path: the bytes (and, when it parsed them, the contract's plain
 * value), the size of a file too large to read, or a failure.
 */
export type ReadAheadResult = { bytes: Uint8Array; value?: Record<string, unknown> } | { tooLarge: number } | { failed: true };

/** A batch of files, by index in the list: [start, end). */
export interface Claimed {
  start: number;
  end: number;
}

/**
 * Reads, and optionally parses, a list of files in a second thread while the caller works through
 * the same list. A domain of 10,000 entities and their routes is 20,000 small files: reading them
 * one after the other costs the loading thread four system calls per file (and a wait on the disk
 * when they are not in the page cache), and parsing them is most of `validate`'s time. The two
 * threads split the list by batches, each claiming the next one from a shared counter, so each does
 * what its speed allows: on two cores the load takes about half as long.
 *
 * The API stays synchronous, so that loadContracts keeps its signature for every caller. The caller
 * claims batches for itself (`claim`) and then takes the thread's results for the rest (`take`),
 * which blocks (Atomics.wait) until the thread has posted the batch. Any trouble (a file that cannot
 * be read, a thread that does not start or does not answer) comes back as `failed`, and the caller
 * reads that file itself, so errors are the same as without the thread.
 */
export class ReadAhead {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  /** [next batch to claim, batches posted by the thread], shared with it; the caller sleeps on [1]. */
  private readonly counters: Int32Array;
  private readonly batches = new Map<number, ReadAheadResult[] | Batch>();
  private abandoned = false;

  constructor(
    private readonly paths: readonly string[],
    maxBytes: number,
    options: { parse?: boolean } = {},
  ) {
    // A missing module would only show as a thread that never answers, after STALL_MS.
    if (!existsSync(fileURLToPath(READER))) throw new Error(`reader thread module missing: ${fileURLToPath(READER)}`);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.counters = new Int32Array(new SharedArrayBuffer(8));
    this.worker = new Worker(READER, {
      workerData: { paths, maxBytes, parse: options.parse === true, batch: BATCH, port: port2, counters: this.counters },
      transferList: [port2],
    });
    // The thread ends by itself after the last batch; it must not keep the process alive earlier.
    this.worker.unref();
    // A thread that fails is seen as one that does not answer (see receive); its 'error' event
    // must not become an uncaught exception later.
    this.worker.on("error", () => {});
  }

  /** The next unclaimed batch, now the caller's to read; null when every batch is claimed. */
  claim(): Claimed | null {
    const start = Atomics.add(this.counters, 0, 1) * BATCH;
    return start < this.paths.length ? { start, end: Math.min(start + BATCH, this.paths.length) } : null;
  }

  /** The thread's result for the file at `index`, which lies in a batch the caller did not claim. */
  take(index: number): ReadAheadResult {
    const b = Math.floor(index / BATCH);
    while (!this.batches.has(b) && !this.abandoned) this.receive();
    let batch = this.batches.get(b);
    if (batch === undefined) return { failed: true };
    if (!Array.isArray(batch)) {
      batch = decodeBatch(batch);
      this.batches.set(b, batch);
    }
    const offset = index - b * BATCH;
    const result = batch[offset] ?? { failed: true };
    // Each result is taken once: the batch goes with its last file.
    if (offset === batch.length - 1) this.batches.delete(b);
    return result;
  }

  /** Stops the thread early (the caller gave up on the list). */
  close(): void {
    this.abandoned = true;
    void this.worker.terminate();
  }

  private receive(): void {
    const seen = Atomics.load(this.counters, 1);
    const message = receiveMessageOnPort(this.port);
    if (message) {
      const batch = message.message as Batch;
      this.batches.set(batch.b, batch);
      return;
    }
    // The thread posts before it counts, so a batch counted after `seen` is ready to receive.
    // A thread that does not answer in time (a disk that stalls for seconds, a thread that failed
    // to start) is left behind: the caller reads the rest itself.
    if (Atomics.wait(this.counters, 1, seen, STALL_MS) === "timed-out" && Atomics.load(this.counters, 1) === seen) this.close();
  }
}

/** How long the caller waits for one batch before it reads on its own. */
const STALL_MS = 5000;
/** Files per batch: small enough that the threads share the list evenly, large enough that messages are few. */
const BATCH = 64;

/** One message of the thread: the bytes of a batch's files in one buffer (transferred, not copied). */
interface Batch {
  b: number;
  buffer: ArrayBuffer;
  /** Per file: its end offset in `buffer`; -1 when it could not be read; -2 - size when too large. */
  ends: number[];
  /** When the thread parsed: a JSON array with each file's plain value, or null where it declined. */
  values: string | null;
}

function decodeBatch(batch: Batch): ReadAheadResult[] {
  const values = batch.values === null ? null : (JSON.parse(batch.values) as (Record<string, unknown> | null)[]);
  let start = 0;
  return batch.ends.map((end, i) => {
    if (end === -1) return { failed: true };
    if (end < -1) return { tooLarge: -2 - end };
    const bytes = new Uint8Array(batch.buffer, start, end - start);
    start = end;
    const value = values?.[i];
    return value ? { bytes, value } : { bytes };
  });
}
