import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";

/** What the reader thread found at a path: the bytes, the size of a file too large to read, or a failure. */
export type ReadAheadResult = { bytes: Uint8Array } | { tooLarge: number } | { failed: true };

/**
 * Reads a list of files in a worker thread, in order, while the caller parses those already read.
 * A domain of 10,000 entities is 15,000 small files; read one after the other by the parsing thread,
 * each read waits on the disk whenever the files are not in the page cache (about 1 s of the run
 * when they are not), and even from the cache it costs the parsing thread four system calls per
 * file. The reader thread takes both off it.
 *
 * The API stays synchronous, so that loadContracts keeps its signature for every caller: `next()`
 * blocks (Atomics.wait) until the thread has posted the batch that holds the next file, and takes
 * it with receiveMessageOnPort. Any trouble (a file that cannot be read, a thread that does not
 * answer) comes back as `failed`, and the caller reads that file itself, so errors are the same
 * as without the thread.
 */
export class ReadAhead {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  /** [batches posted by the thread]; the main thread sleeps on it. */
  private readonly posted: Int32Array;
  private queue: ReadAheadResult[] = [];
  private abandoned = false;

  constructor(paths: readonly string[], maxBytes: number) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.posted = new Int32Array(new SharedArrayBuffer(4));
    // Evaluated source rather than a module file: the same code then runs from dist/, from the
    // TypeScript sources under tsx, and inside the test runner's own workers.
    this.worker = new Worker(READER_SOURCE, {
      eval: true,
      workerData: { paths, maxBytes, port: port2, posted: this.posted },
      transferList: [port2],
    });
    // The thread ends by itself after the last file; it must not keep the process alive earlier.
    this.worker.unref();
    // A thread that fails is seen as one that does not answer (see receive); its 'error' event
    // must not become an uncaught exception later.
    this.worker.on("error", () => {});
  }

  /** The result for the next path of the list, in order. */
  next(): ReadAheadResult {
    if (this.queue.length === 0 && !this.abandoned) this.receive();
    return this.queue.shift() ?? { failed: true };
  }

  /** Stops the thread early (the caller gave up on the list). */
  close(): void {
    this.abandoned = true;
    void this.worker.terminate();
  }

  private receive(): void {
    for (;;) {
      const seen = Atomics.load(this.posted, 0);
      const message = receiveMessageOnPort(this.port);
      if (message) {
        this.queue = decodeBatch(message.message as Batch);
        return;
      }
      // The thread posts before it counts, so a batch counted after `seen` is ready to receive.
      // A thread that does not answer in time (a disk that stalls for seconds, a thread that
      // failed to start) is left behind: the caller reads the rest itself.
      if (Atomics.wait(this.posted, 0, seen, STALL_MS) === "timed-out" && Atomics.load(this.posted, 0) === seen) {
        this.close();
        return;
      }
    }
  }
}

/** How long the parser waits for one batch before it reads on its own. */
const STALL_MS = 5000;
/** Files per message: small enough that parsing starts early, large enough that messages are few. */
const BATCH = 64;

/** One message of the thread: the bytes of up to BATCH files in one buffer (transferred, not copied). */
interface Batch {
  buffer: ArrayBuffer;
  /** Per file: its end offset in `buffer`; -1 when it could not be read; -2 - size when too large. */
  ends: number[];
}

function decodeBatch(batch: Batch): ReadAheadResult[] {
  let start = 0;
  return batch.ends.map((end) => {
    if (end === -1) return { failed: true };
    if (end < -1) return { tooLarge: -2 - end };
    const bytes = new Uint8Array(batch.buffer, start, end - start);
    start = end;
    return { bytes };
  });
}

/**
 * The thread: each file through one open, fstat, read and close, BATCH files to a message, a
 * count bumped and the parser woken after each. Plain JavaScript, run with `eval`.
 */
const READER_SOURCE = `
const { closeSync, fstatSync, openSync, readSync } = require("node:fs");
const { workerData } = require("node:worker_threads");
const { paths, maxBytes, port, posted } = workerData;
const BATCH = ${BATCH};
function readOne(path) {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) return { tooLarge: size };
    const bytes = Buffer.allocUnsafeSlow(size);
    let filled = 0;
    while (filled < size) {
      const n = readSync(fd, bytes, filled, size - filled, null);
      if (n === 0) break;
      filled += n;
    }
    return { bytes: bytes.subarray(0, filled) };
  } finally {
    closeSync(fd);
  }
}
for (let first = 0; first < paths.length; first += BATCH) {
  const parts = [];
  const ends = [];
  let total = 0;
  for (const path of paths.slice(first, first + BATCH)) {
    let r;
    try { r = readOne(path); } catch { r = null; }
    if (r === null) ends.push(-1);
    else if (r.tooLarge !== undefined) ends.push(-2 - r.tooLarge);
    else { parts.push(r.bytes); total += r.bytes.length; ends.push(total); }
  }
  const buffer = new ArrayBuffer(total);
  const view = new Uint8Array(buffer);
  let at = 0;
  for (const p of parts) { view.set(p, at); at += p.length; }
  port.postMessage({ buffer, ends }, [buffer]);
  Atomics.add(posted, 0, 1);
  Atomics.notify(posted, 0);
}
port.close();
`;
