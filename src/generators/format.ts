import { createRequire } from "node:module";
import type * as RuffWasm from "@astral-sh/ruff-wasm-nodejs";
import type * as BiomeWasm from "@biomejs/wasm-nodejs";
import { LINE_LENGTH } from "./fastapi/python.js";
import { LINE_WIDTH } from "./nextjs/source.js";
import type { GeneratedFile } from "./types.js";

/**
 * The format stage: generated Python through Ruff's formatter, generated TypeScript, JavaScript,
 * JSON and CSS through Biome's (formatter and import sorting), both in-process as WebAssembly at the
 * versions pinned in package.json, with the generated project's own settings.
 *
 * Running both formatters over everything costs far more than the generation budget allows (for
 * 2,000 entities about 2 s of Ruff and 10 s of Biome against a 3 s budget, see docs/architecture.md),
 * so the emitters keep laying their text out as the formatters would (`fastapi/py-layout.ts`, the
 * `fit*` helpers of `nextjs/source.ts`), and this stage formats a file only when that layout visibly
 * missed: a line longer than the project's limit. Such a file is formatted whole, so the result is
 * the formatter's, whatever the emitter did. The decision depends on the text alone, so the output
 * stays deterministic.
 */

const require = createRequire(import.meta.url);

type Language = "python" | "biome";

/** Which formatter owns a generated path; null for files no formatter reads (SQL, YAML, Dockerfiles). */
export function formatterOf(path: string): Language | null {
  if (path.endsWith(".py")) return "python";
  if (path.startsWith("frontend/") && /\.(tsx?|mjs|cjs|js|json|jsonc|css)$/.test(path)) return "biome";
  return null;
}

/** The line limit of the generated project's formatter settings for that language. */
function limitOf(language: Language): number {
  return language === "python" ? LINE_LENGTH : LINE_WIDTH;
}

// A line that is one string literal (and its `,`, `;` or `)`): no formatter can shorten it.
const LONE_STRING = /^\s*(?:"[^"]*"|'[^']*'|`[^`]*`)[,;)]*$/;

/**
 * Whether a line of `text` is longer than `limit` characters (as both formatters count ASCII) and
 * could be laid out shorter: a line holding only a string literal is left as it is by both.
 */
export function hasLongLine(text: string, limit: number): boolean {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    if (end - start > limit && !LONE_STRING.test(text.slice(start, end))) return true;
    start = end + 1;
  }
  return false;
}

/** Formats the files whose layout overflowed; every other file is returned as it came. */
export function formatGenerated(files: readonly GeneratedFile[]): GeneratedFile[] {
  return files.map((f) => {
    const language = formatterOf(f.path);
    if (language === null || f.preformatted || !hasLongLine(f.content, limitOf(language))) return f;
    return { ...f, content: formatText(f.path, f.content) };
  });
}

/** `content` as the generated project's formatter prints it. Throws, naming the file, when it does not parse. */
export function formatText(path: string, content: string): string {
  const language = formatterOf(path);
  if (language === null) throw new Error(`no formatter for ${path}`);
  try {
    return language === "python" ? ruff().format(content) : biomeFormat(path, content);
  } catch (e) {
    // A generator bug (the emitted text is not valid code): say which file, not just the wasm trap.
    const reason = e instanceof Error ? e.message : String(e);
    throw new Error(`formatting generated ${path} failed: ${reason}`);
  }
}

// Both WebAssembly modules take about half a second to compile: loaded on first use, once per process.
let ruffWorkspace: RuffWasm.Workspace | undefined;

function ruff(): RuffWasm.Workspace {
  if (ruffWorkspace === undefined) {
    const mod = require("@astral-sh/ruff-wasm-nodejs") as typeof RuffWasm;
    // The generated backend's [tool.ruff] (fastapi/app-modules.ts generatePyproject).
    ruffWorkspace = new mod.Workspace({ "line-length": LINE_LENGTH, "target-version": "py311" }, mod.PositionEncoding.Utf16);
  }
  return ruffWorkspace;
}

let biomeState: { workspace: BiomeWasm.Workspace; projectKey: number } | undefined;

function biome(): { workspace: BiomeWasm.Workspace; projectKey: number } {
  if (biomeState === undefined) {
    const mod = require("@biomejs/wasm-nodejs") as typeof BiomeWasm;
    mod.main();
    const workspace = new mod.Workspace();
    const { projectKey } = workspace.openProject({ path: "", openUninitialized: true });
    workspace.updateSettings({
      projectKey,
      workspaceDirectory: "./",
      // The generated frontend's biome.jsonc (nextjs/templates/biome.jsonc); no size limit, since
      // the API client of a large domain is bigger than Biome's default of 1 MiB.
      configuration: {
        files: { maxSize: 1 << 30 },
        formatter: { indentStyle: "space", indentWidth: 2, lineWidth: LINE_WIDTH },
        css: { parser: { tailwindDirectives: true } },
      },
    });
    biomeState = { workspace, projectKey };
  }
  return biomeState;
}

function biomeFormat(path: string, content: string): string {
  const { workspace, projectKey } = biome();
  workspace.openFile({ projectKey, path, content: { type: "fromClient", content, version: 0 } });
  try {
    // Import sorting is an assist action, not formatting: `biome check` asks for both.
    return workspace.fixFile({
      projectKey,
      path,
      fixFileMode: "safeFixes",
      only: ["assist/source/organizeImports"],
      ruleCategories: ["action"],
      shouldFormat: true,
    }).code;
  } finally {
    workspace.closeFile({ projectKey, path });
  }
}
