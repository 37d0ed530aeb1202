import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { generateTarget } from "../../src/generators/registry.js";
import { buildSuiteCases } from "../../src/generators/tests/cases.js";
import { TEST_REQUIREMENTS } from "../../src/generators/tests/index.js";
import { writeFiles } from "../../src/generators/writer.js";
import { startGeneratedBackend } from "../support/backend.js";
import { entityYaml, routeYaml, writeDomain } from "../support/domain.js";
import { ensureVenv, VENV_PYTHON } from "../support/python.js";

const ref = (entity: string, required: boolean): string =>
  `      type: uuid\n${required ? "      required: true\n" : ""}      references:\n        entity: entity/shop/${entity}\n${required ? "" : "        on_delete: set_null\n"}`;

/**
 * The shape of DigitalOcean's spec that broke the suite: a sink may name a destination; a
 * destination needs a config; configs have no Route. The suite can make a sink, never a destination.
 * A folder may name its parent folder (a reference to itself).
 */
const FILES: Record<string, string> = {
  "entities/config.contract.yaml": entityYaml("config"),
  "entities/destination.contract.yaml": entityYaml("destination", `    name:\n      type: string\n    config_id:\n${ref("config", true)}`),
  "entities/sink.contract.yaml": entityYaml("sink", `    name:\n      type: string\n    destination_id:\n${ref("destination", false)}`),
  "entities/folder.contract.yaml": entityYaml("folder", `    name:\n      type: string\n    parent_id:\n${ref("folder", false)}`),
  ...Object.fromEntries(["destination", "sink", "folder"].map((e) => [`routes/${e}_api.contract.yaml`, routeYaml(e)])),
};

describe("the generated suite and chains of references", () => {
  const domain = writeDomain(FILES);
  let root = "";
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("refers only to records it can make, and says why it cannot make the others", () => {
    const { ir } = checkDomain(domain);
    if (!ir) throw new Error("does not compile");
    const cases = buildSuiteCases(ir);
    expect(Object.keys(cases.entities).sort()).toEqual(["folder", "sink"]);
    expect(cases.entities.sink?.payload).not.toHaveProperty("destination_id");
    expect(cases.uncovered).toEqual(["destination: required reference config_id to an entity without a Route"]);
    // A folder is made without a parent: the parent would need one first, and so on.
    expect(cases.entities.folder?.payload).not.toHaveProperty("parent_id");
  });

  it("passes against the app on the memory backend", async () => {
    ensureVenv(TEST_REQUIREMENTS);
    root = mkdtempSync(join(tmpdir(), "charter-refchains-"));
    const { ir } = checkDomain(domain);
    if (!ir) throw new Error("does not compile");
    writeFiles(join(root, "runtime"), generateTarget(ir, "tests", join(root, "runtime")));
    const app = await startGeneratedBackend({ domainDir: domain, outDir: join(root, "app"), backend: "memory" });
    try {
      const r = spawnSync(VENV_PYTHON, ["-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "test_routes.py"], {
        cwd: join(root, "runtime", "tests"),
        env: { ...process.env, BASE_URL: app.url, PYTHONDONTWRITEBYTECODE: "1" },
        encoding: "utf8",
        timeout: 300_000,
      });
      const output = `${r.stdout}${r.stderr}`;
      expect(r.status, output).toBe(0);
      expect(output).not.toMatch(/KeyError/);
    } finally {
      await app.stop();
    }
  }, 600_000);
});
