import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { REQUIREMENTS } from "../../src/generators/fastapi/app-modules.js";
import { generateTarget } from "../../src/generators/registry.js";
import { TEST_REQUIREMENTS } from "../../src/generators/tests/index.js";
import { writeFiles } from "../../src/generators/writer.js";
import { startGeneratedBackend } from "../support/backend.js";
import { entityYaml, routeYaml, writeDomain } from "../support/domain.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { ensureVenv, VENV_BIN, VENV_PYTHON } from "../support/python.js";

/**
 * Everyday names that are also the generated code's own names (the `settings` and `health` of
 * app/main.py, the `DOMAIN` and `ENTITIES` of app/domain.py, a route module's `LINKS`, the
 * `nothing` and `Hooks` of app/hooks.py), Python builtins and keywords as field names, and the
 * value types that once failed on one repository (faults the import corpus found): the app
 * generated from them starts and passes its own suite on both repositories.
 */

const KEYWORD_FIELDS = ["type", "class", "from", "import", "select", "default", "async", "list", "id_", "settings"];

const ENTITIES: Record<string, string> = {
  setting: "    key:\n      type: string\n      required: true\n",
  domain: "    name:\n      type: string\n      required: true\n",
  health: "    status_text:\n      type: string\n",
  entity: "    title:\n      type: string\n",
  route_contract: "    title:\n      type: string\n",
  link: "    href:\n      type: string\n",
  nothing: "    title:\n      type: string\n",
  hooks: "    title:\n      type: string\n",
  list: "    title:\n      type: string\n",
  // A keyword: its model module cannot be app/models/class.py, which no import statement can name.
  class: "    title:\n      type: string\n",
  order: [
    ...KEYWORD_FIELDS.map((f) => `    ${f}:\n      type: string\n`),
    "    domain_id:\n      type: uuid\n      references:\n        entity: entity/shop/domain\n",
    // A generated id in a text field, and today in a date field (a UUID and a datetime before).
    "    token:\n      type: string\n      computed: uuid\n",
    "    placed_on:\n      type: date\n      computed: now\n",
    // Arrays whose items the request model checks (the suite's samples were refused before).
    "    dates:\n      type: array\n      items_type: date\n      required: true\n",
    "    tags:\n      type: array\n      items_type: object\n",
    "    stamps:\n      type: array\n      items_type: datetime\n",
    "    refs:\n      type: array\n      items_type: uuid\n",
    "    flags:\n      type: array\n      items_type: boolean\n",
  ].join(""),
};

function files(): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(ENTITIES).map(([name, fields]) => [`entities/${name}.contract.yaml`, entityYaml(name, fields)])),
    ...Object.fromEntries(Object.keys(ENTITIES).map((e) => [`routes/${e}_api.contract.yaml`, routeYaml(e)])),
  };
}

function runPytest(cwd: string, baseUrl: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(VENV_PYTHON, ["-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider"], {
      cwd,
      env: { ...process.env, BASE_URL: baseUrl, PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 300_000,
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, output }));
  });
}

describe("an app whose contracts use the generated code's own names", () => {
  let root: string;
  let domain: string;
  beforeAll(() => {
    ensureVenv(TEST_REQUIREMENTS);
    root = mkdtempSync(join(tmpdir(), "charter-names-"));
    domain = writeDomain(files());
    const { ir, findings } = checkDomain(domain);
    if (!ir) throw new Error(`does not compile: ${findings.map((f) => f.message).join("; ")}`);
    writeFiles(join(root, "runtime"), generateTarget(ir, "tests", join(root, "runtime")));
  }, 300_000);
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("generates a backend that passes ruff check, ruff format --check and mypy", () => {
    const { ir } = checkDomain(domain);
    if (!ir) throw new Error("does not compile");
    ensureVenv([...REQUIREMENTS, "mypy==2.4.1"]);
    const out = join(root, "lint");
    writeFiles(out, generateTarget(ir, "fastapi-prod", out));
    const tool = (name: string, args: string[]): string => {
      const r = spawnSync(join(VENV_BIN, name), args, { cwd: join(out, "backend"), encoding: "utf8" });
      const output = `${r.stdout}${r.stderr}`;
      expect(r.status, output).toBe(0);
      return output;
    };
    expect(tool("ruff", ["check", "--no-cache", "."])).toContain("All checks passed");
    expect(tool("ruff", ["format", "--check", "--no-cache", "."])).toMatch(/\d+ files already formatted/);
    expect(tool("mypy", ["--cache-dir", join(root, ".mypy"), "app"])).toContain("Success: no issues found");
  }, 300_000);

  for (const backend of ["memory", "postgres"] as const) {
    it(`starts on ${backend}, answers /health for its domain and passes its generated suite`, async () => {
      const app = await startGeneratedBackend({
        domainDir: domain,
        outDir: join(root, backend),
        backend,
        ...(backend === "postgres" ? { databaseUrl: databaseUrl(freshDatabase("everyday_names")) } : {}),
      });
      try {
        const health = (await (await fetch(`${app.url}/health`)).json()) as { domain: string };
        expect(health.domain).toBe("shop");
        // Asynchronously: a blocking spawnSync freezes the event loop, so fetch's pool never sees
        // uvicorn close the idle keep-alive socket and the next request dies on it.
        const r = await runPytest(join(root, "runtime", "tests"), app.url);
        const output = r.output;
        expect(r.status, `${output}\n${app.logs().slice(-4000)}`).toBe(0);
        // At least each entity's create/get/update/delete and list ran (not skipped).
        expect(Number(/(\d+) passed/.exec(output)?.[1] ?? 0), output).toBeGreaterThanOrEqual(2 * Object.keys(ENTITIES).length);
        // The computed text id and date came back as such.
        const created = await fetch(`${app.url}/orders`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ dates: ["2030-01-15"], class: "a", from: "b", import: "c" }),
        });
        const order = (await created.json()) as Record<string, unknown>;
        expect(created.status, JSON.stringify(order)).toBe(201);
        expect(order.token).toMatch(/^[0-9a-f-]{36}$/);
        expect(order.placed_on).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(order.class).toBe("a");
        expect(order.dates).toEqual(["2030-01-15"]);
      } finally {
        await app.stop();
      }
    }, 600_000);
  }
});
