import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { generateTarget } from "../../src/generators/registry.js";
import type { GeneratedFile } from "../../src/generators/types.js";
import { writeFiles } from "../../src/generators/writer.js";

// The second thread runs compiled JavaScript only: these tests drive the built modules (dist/),
// as `charter forge generate` does, against the one-thread generation of the sources.
const ROOT = resolve(import.meta.dirname, "../..");
type Parallel = typeof import("../../src/generators/parallel.js");
const built = (): Promise<Parallel> => import(join(ROOT, "dist/generators/parallel.js")) as Promise<Parallel>;

const helpdesk = () => {
  const { ir } = checkDomain(join(ROOT, "examples/helpdesk"));
  if (!ir) throw new Error("examples/helpdesk does not compile");
  return ir;
};
const view = (files: readonly GeneratedFile[]) => files.map((f) => [f.path, f.target, f.content, f.warnings ?? [], f.owned === true]);

describe("generation on two threads", () => {
  it("gives the same files, in the same order, as one thread", async () => {
    const { GenerationThreads } = await built();
    const out = mkdtempSync(join(tmpdir(), "charter-parallel-"));
    const ir = helpdesk();
    const threads = GenerationThreads.start("all", { minEntities: 0 });
    expect(threads.threaded).toBe(true);
    const files = await threads.generate(ir, out);
    expect(view(files)).toEqual(view(generateTarget(ir, "all", out)));
    // docker repeats fastapi-prod's requirements: the first target in the registry keeps the path.
    expect(files.filter((f) => f.path === "backend/requirements.txt").map((f) => f.target)).toEqual(["fastapi-prod"]);
  });

  it("reads what the second thread's generators ask for from the output folder", async () => {
    const { GenerationThreads } = await built();
    const out = mkdtempSync(join(tmpdir(), "charter-parallel-"));
    const ir = helpdesk();
    writeFiles(out, generateTarget(ir, "all", out));
    // A second generation over the first: migrations reads its snapshot and adds no migration.
    const threads = GenerationThreads.start("all", { minEntities: 0 });
    expect(threads.threaded).toBe(true);
    const again = await threads.generate(ir, out);
    expect(view(again)).toEqual(view(generateTarget(ir, "all", out)));
    expect(writeFiles(out, again, { dryRun: true }).written).toEqual([]);
  });

  it("generates the second thread's share itself when the thread is gone", async () => {
    const { GenerationThreads } = await built();
    const out = mkdtempSync(join(tmpdir(), "charter-parallel-"));
    const ir = helpdesk();
    const threads = GenerationThreads.start("all", { minEntities: 0 });
    threads.close();
    expect(view(await threads.generate(ir, out))).toEqual(view(generateTarget(ir, "all", out)));
  });

  it("starts no thread for one target, when told not to, or for a target it does not know", async () => {
    const { GenerationThreads } = await built();
    expect(GenerationThreads.start("nextjs").threaded).toBe(false);
    expect(GenerationThreads.start("fastapi-prod").threaded).toBe(false);
    expect(GenerationThreads.start("nope").threaded).toBe(false);
    await expect(GenerationThreads.start("nope").generate(helpdesk(), tmpdir())).rejects.toThrow(/unknown target "nope"/);
    // A domain below the size the thread pays off at is generated here; the thread is stopped.
    const small = GenerationThreads.start("all");
    expect(small.threaded).toBe(true);
    const ir = helpdesk();
    expect(ir.entities.length).toBeLessThan(300);
    const out = mkdtempSync(join(tmpdir(), "charter-parallel-"));
    expect(view(await small.generate(ir, out))).toEqual(view(generateTarget(ir, "all", out)));
    process.env.CHARTER_GENERATE_THREADS = "1";
    try {
      expect(GenerationThreads.start("all").threaded).toBe(false);
    } finally {
      delete process.env.CHARTER_GENERATE_THREADS;
    }
  });

  it("throws a generator's error from the second thread's share as one thread would", async () => {
    const { GenerationThreads } = await built();
    const ir = helpdesk();
    const out = mkdtempSync(join(tmpdir(), "charter-parallel-"));
    // A snapshot that is not JSON: the migrations generator (the second thread's) refuses it.
    mkdirSync(join(out, "backend/db/migrations"), { recursive: true });
    writeFileSync(join(out, "backend/db/migrations/snapshot.json"), "{ not json");
    let single: unknown;
    try {
      generateTarget(ir, "all", out);
    } catch (e) {
      single = e;
    }
    expect(single).toBeInstanceOf(Error);
    const threads = GenerationThreads.start("all", { minEntities: 0 });
    expect(threads.threaded).toBe(true);
    await expect(threads.generate(ir, out)).rejects.toThrow((single as Error).message);
  });
});
