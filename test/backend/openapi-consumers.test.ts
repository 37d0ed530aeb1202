import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend } from "../support/backend.js";
import { ensureVenvFromFile, VENV_BIN, VENV_PYTHON } from "../support/python.js";
import { randomDomain } from "../support/random-domain.js";

/**
 * The generated OpenAPI document as its consumers read it, with their own tools (issue 40): the
 * validator of the specification (openapi-spec-validator), Redocly's linter with its recommended
 * rules, and two TypeScript client generators whose output must compile (openapi-typescript under
 * `tsc --strict`, @hey-api/openapi-ts under `tsc`). On the example domain and a seeded draw of
 * random ones, whose names and field types reach what the example does not.
 */
const BIN = resolve("node_modules/.bin");
const SEED = 40_040;
const RANDOM = 3;

/** Runs a tool; returns its exit code and everything it printed. */
function run(cmd: string, args: readonly string[], cwd: string): { code: number | null; output: string; stdout: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout: 240_000, env: { ...process.env, NO_COLOR: "1" } });
  return { code: r.status, output: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ""}`, stdout: r.stdout };
}

/** The document of a generated backend, from the app itself (no server: `app.openapi()`). */
function dumpOpenapi(backendDir: string, to: string): void {
  const text = execFileSync(
    VENV_PYTHON,
    ["-c", "import orjson, sys; from app.main import app; sys.stdout.buffer.write(orjson.dumps(app.openapi()))"],
    {
      cwd: backendDir,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", DATABASE_BACKEND: "memory", AUTH_SECRET: "x".repeat(40), APP_ENV: "production" },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    },
  );
  writeFileSync(to, text);
}

describe("the OpenAPI document passes its consumers' own tools", () => {
  let root: string;
  const docs: { name: string; file: string }[] = [];

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "charter-openapi-consumers-"));
    const domains: { name: string; dir: string }[] = [{ name: "helpdesk", dir: "examples/helpdesk" }];
    fc.sample(randomDomain(), { numRuns: RANDOM, seed: SEED }).forEach(({ files }, i) => {
      const dir = join(root, `random-${i}`, "domain");
      for (const [rel, text] of Object.entries(files)) {
        mkdirSync(join(dir, rel, ".."), { recursive: true });
        writeFileSync(join(dir, rel), text);
      }
      domains.push({ name: `random-${i}`, dir });
    });
    for (const { name, dir } of domains) {
      const backendDir = generateBackend(dir, join(root, name, "out"));
      ensureVenvFromFile(join(backendDir, "requirements.txt"));
      const file = join(root, `${name}.openapi.json`);
      dumpOpenapi(backendDir, file);
      docs.push({ name, file });
    }
  }, 600_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("states security on every operation, servers, a licence and a 4XX on /health", () => {
    const doc = JSON.parse(readFileSync(docs[0]?.file ?? "", "utf8"));
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    expect(doc.info.license).toMatchObject({ identifier: expect.any(String) });
    expect(doc.paths["/health"].get.security).toEqual([]);
    expect(doc.paths["/auth/login"].post.security).toEqual([]);
    expect(doc.paths["/tickets"].get.security).toEqual([{ HTTPBearer: [] }]);
    expect(Object.keys(doc.paths["/health"].get.responses)).toContain("4XX");
  });

  it("is valid for openapi-spec-validator", () => {
    for (const { name, file } of docs) {
      const r = run(join(VENV_BIN, "openapi-spec-validator"), [file], root);
      expect(r.code, `${name}: ${r.output}`).toBe(0);
      expect(r.output).toContain("OK");
    }
  }, 120_000);

  it("has no error under Redocly's recommended rules", () => {
    for (const { name, file } of docs) {
      const r = run(join(BIN, "redocly"), ["lint", "--extends=recommended", "--format=json", file], root);
      const report = JSON.parse(r.stdout) as {
        totals: { errors: number };
        problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
      };
      const errors = report.problems
        .filter((p) => p.severity === "error")
        .map((p) => `${name}#${p.location[0]?.pointer}: ${p.ruleId}: ${p.message}`);
      expect(errors).toEqual([]);
      expect(report.totals.errors).toBe(0);
      expect(r.code, r.output).toBe(0);
    }
  }, 180_000);

  it("gives openapi-typescript types that pass tsc --strict", () => {
    const out = join(root, "openapi-typescript");
    for (const { name, file } of docs) {
      const r = run(join(BIN, "openapi-typescript"), [file, "-o", join(out, `${name}.d.ts`)], root);
      expect(r.code, `${name}: ${r.output}`).toBe(0);
    }
    // A use of the recursive JSON value, so that its type is not only declared but instantiated.
    const schema = readFileSync(join(out, "helpdesk.d.ts"), "utf8");
    expect(schema).toMatch(/"JsonValue-Input"/);
    writeFileSync(
      join(out, "use.ts"),
      'import type { components } from "./helpdesk.js";\nexport const v: components["schemas"]["JsonValue-Input"] = { a: [1, "b", null, { c: true }] };\n',
    );
    const tsc = run(
      join(BIN, "tsc"),
      [
        "--strict",
        "--noEmit",
        "--target",
        "es2022",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        ...docs.map((d) => `${d.name}.d.ts`),
        "use.ts",
      ],
      out,
    );
    expect(tsc.output).toBe("");
    expect(tsc.code).toBe(0);
  }, 180_000);

  it("gives an @hey-api/openapi-ts client that passes tsc", () => {
    const out = join(root, "hey-api");
    for (const { name, file } of docs) {
      const r = run(join(BIN, "openapi-ts"), ["-i", file, "-o", join(out, name)], root);
      expect(r.code, `${name}: ${r.output}`).toBe(0);
    }
    const lib = ["--lib", "es2022,dom,dom.iterable"];
    const args = ["--strict", "--noEmit", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", ...lib];
    const tsc = run(join(BIN, "tsc"), [...args, ...docs.map((d) => join(d.name, "index.ts"))], out);
    expect(tsc.output).toBe("");
    expect(tsc.code).toBe(0);
  }, 180_000);
});
