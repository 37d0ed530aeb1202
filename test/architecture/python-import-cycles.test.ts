import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Import circles among the generated Python modules (issue 40 found `errors -> healer ->
 * observability -> errors`, held apart by an import inside a function). Every import of an `app`
 * module counts, at module level or inside a function: a circle hidden in a function still makes
 * the order of initialisation matter. Only imports under `if TYPE_CHECKING:` are left out, which
 * never run.
 */
const GOLDEN_APP = resolve("test/golden/fastapi-prod/helpdesk/backend/app");

/** The modules of a package folder, by dotted name (`app.auth.routes`), with their files. */
function modules(appDir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".py")) {
        const rel = relative(join(appDir, ".."), path)
          .replace(/\.py$/, "")
          .replace(/\/__init__$/, "");
        out.set(rel.split("/").join("."), path);
      }
    }
  };
  walk(appDir);
  return out;
}

/** The `app` modules a file imports, outside `if TYPE_CHECKING:` blocks. */
function imports(text: string, known: Map<string, string>): string[] {
  const out: string[] = [];
  let typeOnlyIndent: number | null = null;
  for (const line of text.split("\n")) {
    const indent = line.length - line.trimStart().length;
    if (line.trim() === "") continue;
    if (typeOnlyIndent !== null && indent <= typeOnlyIndent) typeOnlyIndent = null;
    if (/^\s*if TYPE_CHECKING:/.test(line)) {
      typeOnlyIndent = indent;
      continue;
    }
    if (typeOnlyIndent !== null) continue;
    const from = /^\s*from (app(?:\.\w+)*) import \(?([\w, ]+)/.exec(line);
    if (from) {
      const base = from[1] ?? "";
      for (const name of (from[2] ?? "").split(",").map((n) => n.trim().split(" ")[0] ?? "")) {
        const sub = `${base}.${name}`;
        out.push(known.has(sub) ? sub : base);
      }
      continue;
    }
    const plain = /^\s*import (app(?:\.\w+)*)/.exec(line);
    if (plain) out.push(plain[1] ?? "");
  }
  return out.filter((m) => known.has(m));
}

/** Every circle of imports (a strongly connected component of more than one module, or a self-import). */
function circles(appDir: string): string[][] {
  const known = modules(appDir);
  const edges = new Map([...known].map(([name, file]) => [name, imports(readFileSync(file, "utf8"), known)]));
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
        onStack.delete(w);
        component.push(w);
        if (w === v) break;
      }
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const name of [...known.keys()].sort()) if (!index.has(name)) visit(name);
  return found;
}

describe("import circles of the generated Python", () => {
  it("finds none in the generated helpdesk backend, function-level imports included", () => {
    expect(existsSync(join(GOLDEN_APP, "errors.py"))).toBe(true);
    expect(circles(GOLDEN_APP)).toEqual([]);
  });

  it("finds a circle closed by an import inside a function, and ignores TYPE_CHECKING imports", () => {
    const root = mkdtempSync(join(tmpdir(), "charter-py-cycles-"));
    try {
      const app = join(root, "app");
      mkdirSync(join(app, "auth"), { recursive: true });
      writeFileSync(join(app, "__init__.py"), "");
      writeFileSync(join(app, "auth", "__init__.py"), "");
      writeFileSync(join(app, "errors.py"), "from app import healer, observability\n");
      writeFileSync(join(app, "healer.py"), "from app import observability\n");
      writeFileSync(join(app, "observability.py"), "def f():\n    from app.errors import error_response\n");
      writeFileSync(
        join(app, "pool.py"),
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.auth.routes import x\nfrom app.config import y\n",
      );
      writeFileSync(join(app, "config.py"), "");
      writeFileSync(join(app, "auth", "routes.py"), "from app import pool\n");
      expect(circles(app)).toEqual([["app.errors", "app.healer", "app.observability"]]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
