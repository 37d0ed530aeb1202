import { parentPort, workerData } from "node:worker_threads";
import { type DomainIR, freezeIr } from "../compiler/index.js";
import { resolveTargets, runGenerators } from "./registry.js";

/**
 * The second thread of a generation (parallel.ts): it loads the generators while the first thread
 * compiles, then generates its targets from the IR it is handed and posts the files back. A
 * generator's error goes back as a message: the first thread generates that share itself and
 * throws it there.
 */
const { targets } = workerData as { targets: string[] };
const generators = targets.flatMap((t) => resolveTargets(t));

parentPort?.once("message", ({ ir, outDir }: { ir: DomainIR; outDir: string }) => {
  try {
    parentPort?.postMessage({ files: runGenerators(freezeIr(ir), generators, outDir) });
  } catch (e) {
    parentPort?.postMessage({ error: e instanceof Error ? e.message : String(e) });
  }
});
