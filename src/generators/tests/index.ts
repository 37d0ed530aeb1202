import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { hashHeader } from "../header.js";
import { templatesDir } from "../template-dir.js";
import type { GeneratedFile, Generator, GeneratorInput } from "../types.js";
import { buildSuiteCases } from "./cases.js";

export { buildSuiteCases, type SuiteCases } from "./cases.js";

/** Everything this target writes lives under tests/ of the output root. */
export const TESTS_DIR = "tests";

/** The suite needs only these, pinned like the backend's requirements. */
export const TEST_REQUIREMENTS = ["httpx==0.28.1", "pytest==9.0.2"];

let templates: [string, string][] | null = null;

function staticFiles(): [string, string][] {
  if (templates) return templates;
  // Real files under ./templates, lint-clean where they stand.
  const dir = templatesDir(import.meta.url, "tests", "conftest.py");
  templates = readdirSync(dir)
    .filter((name) => name.endsWith(".py"))
    .sort()
    .map((name) => [name, readFileSync(join(dir, name), "utf8")]);
  return templates;
}

/**
 * The `tests` target: a black-box pytest suite of the generated API. The cases (bodies, expected
 * statuses, workflow moves, access rules) are worked out from the IR into tests/cases.json; the
 * Python around them is static. It runs against BASE_URL with only pytest and httpx.
 */
export function generateTests({ ir }: GeneratorInput): GeneratedFile[] {
  const header = hashHeader();
  const files: GeneratedFile[] = staticFiles().map(([name, content]) => ({ path: `${TESTS_DIR}/${name}`, content: header + content }));
  const cases = { "//": header.slice(2).trimEnd(), ...buildSuiteCases(ir) };
  files.push({ path: `${TESTS_DIR}/cases.json`, content: `${JSON.stringify(cases, null, 2)}\n` });
  files.push({ path: `${TESTS_DIR}/requirements.txt`, content: `${header}${TEST_REQUIREMENTS.join("\n")}\n` });
  files.push({
    path: `${TESTS_DIR}/pytest.ini`,
    content: `${header}[pytest]\n# The suite is black-box: it talks to BASE_URL over HTTP and imports nothing of the app.\naddopts = -p no:cacheprovider\n`,
  });
  return files;
}

export const testsGenerator: Generator = {
  target: "tests",
  description: "black-box pytest suite of the generated API (run against BASE_URL)",
  generate: generateTests,
};
