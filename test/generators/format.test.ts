import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import type { DomainIR } from "../../src/compiler/ir.js";
import { formatGenerated, formatText, formatterOf, hasLongLine } from "../../src/generators/format.js";
import { GENERATORS, generateTarget } from "../../src/generators/index.js";
import { byNaturalOrder, sortImports } from "../../src/generators/nextjs/source.js";
import type { GeneratedFile } from "../../src/generators/types.js";
import { writeLayoutDomain } from "../support/layout-corpus.js";

/**
 * The format stage (src/generators/format.ts): the real formatters, in-process, applied to the
 * generated files whose hand-made layout overflowed the line limit. These tests use the WebAssembly
 * builds; test/generators/format-corpus.test.ts checks the output with the ruff and biome CLIs.
 */

const work = mkdtempSync(join(tmpdir(), "charter-format-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function compile(dir: string): DomainIR {
  const { ir, findings } = checkDomain(dir);
  if (!ir) throw new Error(findings.map((f) => `${f.file}:${f.line}: ${f.message}`).join("\n"));
  return ir;
}

/** What the generators emit, before the format stage. */
function emitted(ir: DomainIR): GeneratedFile[] {
  const files = new Map<string, GeneratedFile>();
  for (const g of GENERATORS.filter((x) => x.target !== "k8s"))
    for (const f of g.generate({ ir, existing: new Map() })) if (!files.has(f.path)) files.set(f.path, f);
  return [...files.values()];
}

const helpdesk = compile(join(import.meta.dirname, "../../examples/helpdesk"));
// Seed 4: six entities with long names, whose emitted layout overflows in both languages.
const corpus = compile(writeLayoutDomain(join(work, "dom4"), 4));

describe("format stage", () => {
  it("leaves files whose lines fit, and verbatim templates, untouched: the same objects", () => {
    const files = emitted(helpdesk);
    const out = formatGenerated(files);
    expect(out.every((f, i) => f === files[i])).toBe(true);
  });

  it("formats a Python file with an over-long line as ruff does, and only that file", () => {
    const long = {
      path: "backend/app/x.py",
      content: `VALUE = call(${Array.from({ length: 12 }, (_, i) => `"argument_${i}"`).join(", ")})\n`,
    };
    const short = { path: "backend/app/y.py", content: "X = call(1,2)\n" };
    const [a, b] = formatGenerated([long, short]);
    expect(a?.content).toBe(`VALUE = call(\n${Array.from({ length: 12 }, (_, i) => `    "argument_${i}",`).join("\n")}\n)\n`);
    // Not reformatted (ruff would add a space): only an overflow sends a file to the formatter.
    expect(b).toBe(short);
  });

  it("sends only lines a formatter could shorten, and never verbatim templates", () => {
    const lone = `  "${"x".repeat(200)}",\n`;
    expect(hasLongLine(lone, 120)).toBe(false);
    expect(hasLongLine(`f(${lone.trim()} 1)\n`, 120)).toBe(true);
    const template = { path: "frontend/src/x.ts", content: `export const a = [${"1, ".repeat(60)}];\n`, preformatted: true };
    expect(formatGenerated([template])[0]).toBe(template);
  });

  it("sorts import names in biome's natural order", () => {
    const names = ["aa", "Ab", "a10", "a9", "B", "b", "bOx", "boA", "A_b", "Ab_", "a_b", "ab"];
    // The order the biome CLI gives these names.
    expect([...names].sort(byNaturalOrder)).toEqual(["A_b", "Ab", "Ab_", "a_b", "a9", "a10", "aa", "ab", "B", "b", "bOx", "boA"]);
    const text = `import { ${names.join(", ")} } from "./m";\nexport const all = [${names.join(", ")}, ${"x, ".repeat(30)}];\n`;
    expect(formatText("frontend/src/lib/x.ts", text).split("\n")[0]).toBe(
      `import { ${[...names].sort(byNaturalOrder).join(", ")} } from "./m";`,
    );
  });

  it("orders import sources as biome does: folders first, then `.`, `_`, `-`, digits, letters", () => {
    const sources = [
      "@/components/page-header",
      "@/components/page/page-form",
      "@/components/page.x",
      "@/components/page_y",
      "@/components/pageZ",
      "@/components/page",
      "@/components/page2/x",
      "@/components/Page/x",
      "@/components/page-state",
      "@/components/page10",
      "@/components/page9-a",
      "@/lib/api",
      "next/link",
      "react",
      "./local",
    ];
    const lines = sources.map((s, i) => `import { a${i} } from "${s}";`);
    const ours = sortImports(lines);
    // What the real biome (the format stage's, pinned) does with the same lines.
    const text = `${[...lines].reverse().join("\n")}\nexport const all = [${sources.map((_, i) => `a${i}`).join(", ")}, ${"x, ".repeat(30)}];\n`;
    const biome = formatText("frontend/src/lib/x.ts", text)
      .split("\n")
      .filter((l) => l.startsWith("import "));
    expect(ours.split("\n")).toEqual(biome);
  });

  it("formats TypeScript with biome's layout and import order", () => {
    const names = Array.from({ length: 10 }, (_, i) => `someRatherLongExportedName${9 - i}`);
    const text = `import { ${names.join(", ")} } from "./m";\nexport const all = [${names.join(", ")}];\n`;
    const out = formatText("frontend/src/lib/x.ts", text);
    expect(out).toBe(
      `import {\n${[...names]
        .reverse()
        .map((n) => `  ${n},\n`)
        .join("")}} from "./m";\n` + `export const all = [\n${names.map((n) => `  ${n},\n`).join("")}];\n`,
    );
  });

  it("is idempotent: formatting formatted output changes nothing", () => {
    const once = generateTarget(corpus, "all", join(work, "none"));
    const formatted = once.filter((f) => formatterOf(f.path) !== null);
    expect(formatted.length).toBeGreaterThan(20);
    for (const f of formatted) expect(formatText(f.path, f.content), f.path).toBe(f.content);
  });

  it("is deterministic and carries weight on the corpus domain", () => {
    const raw = emitted(corpus);
    const a = formatGenerated(raw);
    const b = formatGenerated(emitted(corpus));
    expect(b).toEqual(a);
    const changed = a.filter((f, i) => f.content !== raw[i]?.content).map((f) => f.path);
    // The corpus domain's long names overflow the hand-made layout in both languages.
    expect(changed.some((p) => p.endsWith(".py"))).toBe(true);
    expect(changed.some((p) => p.endsWith(".tsx") || p.endsWith(".ts"))).toBe(true);
    expect(changed.every((p) => hasLongLine(raw.find((f) => f.path === p)?.content ?? "", p.endsWith(".py") ? 120 : 140))).toBe(true);
  });

  it("keeps the hand-made layout of the helpdesk example equal to the formatters'", () => {
    for (const f of emitted(helpdesk)) if (formatterOf(f.path) !== null) expect(formatText(f.path, f.content), f.path).toBe(f.content);
  });

  it("names the file when the emitted text does not parse", () => {
    expect(() => formatText("backend/app/broken.py", "def (:\n")).toThrow(/backend\/app\/broken\.py/);
  });
});
