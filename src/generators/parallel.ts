import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { DomainIR } from "../compiler/index.js";
import { generateTarget, mergeOutputs, resolveTargets, runGenerators } from "./registry.js";
import type { GeneratedFile, Generator } from "./types.js";

/** The thread's module: compiled JavaScript beside this one in dist/ (absent under tsx and vitest). */
const THREAD = new URL("./generate-thread.js", import.meta.url);

/**
 * The targets a second thread takes when a generation has others too. They are about as much work
 * together as fastapi-prod alone (for 2,000 entities: nextjs 0.5-0.7 s, postgres and migrations
 * 0.5-0.7 s sharing one schema model, tests 0.1 s, against 1.4-2.5 s of fastapi-prod), and
 * postgres and migrations must stay on one thread to share that model.
 */
const SECOND_THREAD_TARGETS: ReadonlySet<string> = new Set(["nextjs", "postgres", "migrations", "tests"]);

/**
 * Below this many entities the thread is stopped unused: handing it the IR and waiting for it costs
 * more than its share saves (all targets, no writing: 50 entities 0.76 s against 0.63 s on one
 * thread, 200 even, 500 1.28 s against 1.37 s).
 */
const SECOND_THREAD_MIN_ENTITIES = 300;

/**
 * Generates on two threads: `forge generate --target all` is several independent generators over
 * one IR, and on two cores the second thread's share costs no wall time while the first does
 * fastapi-prod. Start it before compiling (`start`), so that the thread loads the generators'
 * modules while the caller loads the contracts; then `generate` hands it the IR.
 *
 * The output is the same files in the same order as `generateTarget` in one thread (registry.ts
 * `mergeOutputs`). Whatever goes wrong with the thread (its module absent, as under tsx, or it
 * fails to start or dies), its share is generated here instead; a generator's own error is thrown
 * here as it would be without the thread. CHARTER_GENERATE_THREADS=1 keeps one thread.
 */
export class GenerationThreads {
  private constructor(
    private readonly target: string,
    private readonly worker: Worker | null,
    private readonly minEntities: number,
  ) {}

  /**
   * Starts the second thread for `target` when it would have a share; unknown targets start none.
   * `minEntities`: the smallest domain the thread generates for (the rest stop it unused).
   */
  static start(target: string, { minEntities = SECOND_THREAD_MIN_ENTITIES }: { minEntities?: number } = {}): GenerationThreads {
    let shared: Generator[] = [];
    try {
      shared = splitShares(resolveTargets(target)).second;
    } catch {
      // An unknown target: generate() throws the registry's error.
    }
    const wanted = shared.length > 0 && process.env.CHARTER_GENERATE_THREADS !== "1" && existsSync(fileURLToPath(THREAD));
    if (!wanted) return new GenerationThreads(target, null, minEntities);
    const worker = new Worker(THREAD, { workerData: { targets: shared.map((g) => g.target) } });
    // Its failure is seen by generate(); it must not become an uncaught exception meanwhile.
    worker.on("error", () => {});
    return new GenerationThreads(target, worker, minEntities);
  }

  /**
   * Whether a second thread was started (no: one target, CHARTER_GENERATE_THREADS=1, or running from
   * source); a small domain may still be generated without it.
   */
  get threaded(): boolean {
    return this.worker !== null;
  }

  /** The files of the target, formatted, as generateTarget gives them. */
  async generate(ir: DomainIR, outDir: string): Promise<GeneratedFile[]> {
    if (this.worker === null || ir.entities.length < this.minEntities) {
      this.close();
      return generateTarget(ir, this.target, outDir);
    }
    const { first, second } = splitShares(resolveTargets(this.target));
    const answer = answerOf(this.worker);
    this.worker.postMessage({ ir, outDir });
    try {
      const mine = runGenerators(ir, first, outDir);
      const theirs = await answer;
      return mergeOutputs([mine, theirs ?? runGenerators(ir, second, outDir)]);
    } finally {
      this.close();
    }
  }

  /** Stops the thread (generation refused, or done). */
  close(): void {
    void this.worker?.terminate();
  }
}

function splitShares(generators: readonly Generator[]): { first: Generator[]; second: Generator[] } {
  const second = generators.filter((g) => SECOND_THREAD_TARGETS.has(g.target));
  const first = generators.filter((g) => !SECOND_THREAD_TARGETS.has(g.target));
  return first.length > 0 ? { first, second } : { first: [...generators], second: [] };
}

/**
 * The thread's files; null when it failed. A generator that threw there throws again when its share
 * is generated here, with this thread's stack, as without the second thread.
 */
function answerOf(worker: Worker): Promise<GeneratedFile[] | null> {
  return new Promise((resolve) => {
    worker.once("message", (m: { files?: GeneratedFile[] }) => resolve(m.files ?? null));
    worker.once("error", () => resolve(null));
    worker.once("exit", () => resolve(null));
  });
}
