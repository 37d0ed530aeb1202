import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Import cycles between Charter's own modules, by a scan of relative specifiers (static, `export
 * ... from`, `import type` and dynamic `import()`): a cycle makes module initialisation order
 * matter and two modules impossible to understand apart. The generated app's templates are not
 * Charter's code and are left out, as tsconfig.json leaves them out.
 */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

function sourceFiles(root: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(root).sort()) {
    const abs = join(root, name);
    if (statSync(abs).isDirectory()) {
      if (name !== "templates") out.push(...sourceFiles(abs));
    } else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(abs);
  }
  return out;
}

/** The file a relative specifier names: `./x.js` is `./x.ts`, `./dir` is `./dir/index.ts`. */
function resolveSpecifier(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")];
  return candidates.find((c) => c.endsWith(".ts") && existsSync(c) && statSync(c).isFile());
}

/** Every strongly connected component of more than one module (or a module importing itself), as sorted paths. */
function importCycles(root: string): string[][] {
  const files = sourceFiles(root);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const m of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const target = resolveSpecifier(file, m[1] as string);
      if (target) targets.add(target);
    }
    edges.set(file, [...targets].sort());
  }
  // Tarjan's algorithm, iterative so that a long import chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of files) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1] as { node: string; i: number };
      const out = edges.get(top.node) ?? [];
      if (top.i < out.length) {
        const to = out[top.i++] as string;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node) as number, index.get(to) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(top.node) as number));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== top.node);
      const selfImport = (edges.get(top.node) ?? []).includes(top.node);
      if (component.length > 1 || selfImport) cycles.push(component.map((f) => relative(root, f)).sort());
    }
  }
  return cycles;
}

describe("import cycles", () => {
  it("finds none among the modules of src/", () => {
    expect(importCycles(resolve("src"))).toEqual([]);
  });

  it("finds a cycle through static, type-only and dynamic imports, and ignores templates", () => {
    const root = mkdtempSync(join(tmpdir(), "charter-cycles-"));
    mkdirSync(join(root, "a"));
    mkdirSync(join(root, "gen", "templates"), { recursive: true });
    writeFileSync(join(root, "a", "one.ts"), 'import { two } from "./two.js";\nexport const one = two;\n');
    writeFileSync(join(root, "a", "two.ts"), 'import type { Three } from "../three.js";\nexport const two = 2;\n');
    writeFileSync(join(root, "three.ts"), 'export type Three = 3;\nexport const load = () => import("./a/one.js");\n');
    writeFileSync(join(root, "alone.ts"), 'import { one } from "./a/one.js";\nexport { one };\n');
    writeFileSync(join(root, "gen", "templates", "x.ts"), 'import "./y.js";\n');
    writeFileSync(join(root, "gen", "templates", "y.ts"), 'import "./x.js";\n');
    expect(importCycles(root)).toEqual([["a/one.ts", "a/two.ts", "three.ts"]]);
  });
});
