import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import type { DomainIR } from "../../src/compiler/ir.js";
import { docsAssets } from "../../src/generators/fastapi/docs-assets.js";
import { staticTemplates } from "../../src/generators/fastapi/templates.js";
import { GENERATED_NOTICE, generateTarget, hashHeader, OWNED_NOTICE, writeFiles } from "../../src/generators/index.js";
import { expectGolden } from "../support/golden.js";
import { ensureVenv, VENV_BIN } from "../support/python.js";

/**
 * Generator scenarios, one folder each under scenarios/: `domain/` (the contracts), `scenario.json`
 * (`description`, `targets`) and `expected/` (the golden output of those targets, rewritten with
 * UPDATE_GOLDEN=1). A new scenario is a new folder; this runner finds it. The expected output
 * leaves out the static modules copied verbatim from the templates (the helpdesk golden holds
 * those once) and the vendored documentation bundles; everything that depends on the contracts is compared.
 */
const ROOT = join(import.meta.dirname, "scenarios");

interface Scenario {
  name: string;
  description: string;
  targets: string[];
}

const scenarios: Scenario[] = readdirSync(ROOT)
  .filter((name) => existsSync(join(ROOT, name, "scenario.json")))
  .sort()
  .map((name) => ({ name, ...(JSON.parse(readFileSync(join(ROOT, name, "scenario.json"), "utf8")) as Omit<Scenario, "name">) }));

function compile(s: Scenario): DomainIR {
  const { ir, findings } = checkDomain(join(ROOT, s.name, "domain"));
  if (!ir) throw new Error(`${s.name}: ${findings.map((f) => `${f.file}:${f.line}: ${f.message}`).join("\n")}`);
  return ir;
}

function generate(s: Scenario) {
  const ir = compile(s);
  return s.targets.flatMap((t) => generateTarget(ir, t, "/nonexistent"));
}

describe("generator scenarios", () => {
  it("finds the scenario folders", () => {
    expect(scenarios.map((s) => s.name)).toEqual(expect.arrayContaining(["item-minimal", "long-lines"]));
  });

  describe.each(scenarios)("$name: $description", (s) => {
    it("matches the golden output", () => {
      const copies = new Map<string, string>([
        ...[...staticTemplates()].map(([path, text]) => [`backend/${path}`, hashHeader() + text] as const),
        ...docsAssets().map(([path, text]) => [`backend/${path}`, text] as const),
      ]);
      expectGolden(
        join(ROOT, s.name, "expected"),
        generate(s).filter((f) => copies.get(f.path) !== f.content),
      );
    });

    it("gives the same bytes twice, each file with the @generated notice (the user's with theirs)", () => {
      const a = generate(s);
      expect(generate(s)).toEqual(a);
      for (const f of a) expect(f.content.slice(0, 400), f.path).toContain(f.owned ? OWNED_NOTICE : GENERATED_NOTICE);
    });

    it.runIf(s.targets.includes("fastapi-prod"))("passes ruff check and ruff format --check", () => {
      ensureVenv();
      const dir = mkdtempSync(join(tmpdir(), `charter-scenario-${s.name}-`));
      try {
        writeFiles(dir, generate(s));
        const ruff = (args: string[]): string =>
          execFileSync(join(VENV_BIN, "ruff"), [...args, "--no-cache", "."], { cwd: join(dir, "backend"), encoding: "utf8" });
        expect(ruff(["check"])).toContain("All checks passed");
        expect(ruff(["format", "--check"])).toMatch(/files? already formatted/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
