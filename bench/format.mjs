#!/usr/bin/env node
// What the format stage costs on a synthetic domain of 2,000 entities (BENCH_ENTITIES), and what
// formatting every generated file with the real formatters instead would cost: Ruff and Biome
// (WebAssembly, in-process; Biome with its import sorting, as `biome check` wants) timed on a sample
// of BENCH_FORMAT_SAMPLE files of each language, then scaled to all files by size. CPU time, the
// steadier figure on a shared machine. Run after `npm run build`.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { writeSyntheticDomain } from "./synthetic-domain.mjs";

const root = resolve(import.meta.dirname, "..");
if (!existsSync(join(root, "dist/generators/format.js")))
  execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
const { checkDomain } = await import(join(root, "dist/compiler/compile-path.js"));
const { GENERATORS, ALL_TARGETS } = await import(join(root, "dist/generators/registry.js"));
const { formatGenerated, formatterOf, formatText } = await import(join(root, "dist/generators/format.js"));
const N = Number(process.env.BENCH_ENTITIES ?? 2000);
const SAMPLE = Number(process.env.BENCH_FORMAT_SAMPLE ?? 200);

const cpuMs = (fn) => {
  const c = process.cpuUsage();
  const value = fn();
  const d = process.cpuUsage(c);
  return { value, ms: (d.user + d.system) / 1000 };
};

const work = mkdtempSync(join(tmpdir(), "charter-bench-format-"));
try {
  writeSyntheticDomain(work, N);
  const { ir } = checkDomain(work);
  const files = GENERATORS.filter((g) => ALL_TARGETS.includes(g.target)).flatMap((g) => g.generate({ ir, existing: new Map() }));
  const stage = cpuMs(() => formatGenerated(files));
  const formatted = stage.value.filter((f, i) => f !== files[i]).length;
  console.log(`format stage, ${N} entities, ${files.length} files: ${stage.ms.toFixed(0)} ms CPU, ${formatted} files sent to a formatter`);
  for (const language of ["python", "biome"]) {
    const all = files.filter((f) => formatterOf(f.path) === language && !f.preformatted);
    const step = Math.max(1, Math.floor(all.length / SAMPLE));
    const sample = all.filter((_, i) => i % step === 0).slice(0, SAMPLE);
    const init = cpuMs(() => formatText(sample[0].path, sample[0].content));
    const run = cpuMs(() => sample.filter((f) => formatText(f.path, f.content) !== f.content).length);
    // Scaled by bytes, not files: a few files (the API client, the types) are far bigger than the rest.
    const bytes = (fs) => fs.reduce((n, f) => n + f.content.length, 0);
    const perMb = run.ms / (bytes(sample) / 1e6);
    console.log(
      `  ${language === "python" ? "ruff " : "biome"} (wasm): load + first file ${init.ms.toFixed(0)} ms; ${perMb.toFixed(0)} ms per MB over ${sample.length} files ` +
        `(${run.value} would change) -> all ${all.length} emitted files (${(bytes(all) / 1e6).toFixed(1)} MB): ~${((perMb * bytes(all)) / 1e9).toFixed(1)} s CPU`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
