import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { generateTarget, writeFiles } from "../../src/generators/index.js";
import { writeLayoutDomain } from "../support/layout-corpus.js";
import { ensureVenv, VENV_BIN } from "../support/python.js";

/**
 * Generated code is formatter-clean on domains it was not written for: random domains with long
 * names (test/support/layout-corpus.ts) go through `generateTarget`, the hand-made layout and the
 * format stage, and the real CLIs check the result: `ruff format --check` on the backend and the
 * tests (with the backend's pyproject settings), `biome check` (format, import order, lint) on the
 * frontend with its own biome.jsonc. The CLIs are not the WebAssembly builds the stage runs, so a
 * difference between those versions shows here too.
 */

const SEEDS = [1, 2, 3, 4, 9, 26];
const work = mkdtempSync(join(tmpdir(), "charter-format-corpus-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const BIOME = resolve(import.meta.dirname, "../../node_modules/.bin/biome");

describe("formatter-clean output on a corpus of random domains", () => {
  it.each(SEEDS)("seed %i: ruff format --check and biome check pass", (seed) => {
    ensureVenv();
    const { ir, findings } = checkDomain(writeLayoutDomain(join(work, `d${seed}`, "domain"), seed));
    if (!ir) throw new Error(findings.map((f) => `${f.file}:${f.line}: ${f.message}`).join("\n"));
    const out = join(work, `d${seed}`, "out");
    writeFiles(out, generateTarget(ir, "all", out));
    for (const dir of ["backend", "tests"]) {
      const r = spawnSync(join(VENV_BIN, "ruff"), ["format", "--check", "--no-cache", "--line-length", "120", "."], {
        cwd: join(out, dir),
        encoding: "utf8",
      });
      expect(`${r.stdout}${r.stderr}`, `${dir} of seed ${seed}`).toMatch(/\d+ files? already formatted/);
      expect(r.status).toBe(0);
    }
    const b = spawnSync(BIOME, ["check", "--max-diagnostics=20", "."], { cwd: join(out, "frontend"), encoding: "utf8" });
    expect(`${b.stdout}${b.stderr}`, `frontend of seed ${seed}`).not.toMatch(/×/);
    expect(b.status).toBe(0);
    // The backend still lints (the stage only moves code around).
    execFileSync(join(VENV_BIN, "ruff"), ["check", "--no-cache", "--select", "E4,E7,E9,F", "."], {
      cwd: join(out, "backend"),
      encoding: "utf8",
    });
  });
});
