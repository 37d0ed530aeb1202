import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readModel } from "../../src/importers/factory/index.js";
import { sharePathEntities } from "../../src/importers/factory/openapi.js";
import type { ImportNote, ImportOperation } from "../../src/importers/model.js";
import { planImport } from "../../src/importers/pipeline.js";
import { runCharter } from "../support/cli.js";
import { judgeOpenApi } from "../support/import-judges/openapi.js";
import { validates } from "./support.js";

/**
 * A resource keyed by several path parameters (`/{dataset}/{version}/records/{id}`) whose schema
 * (`Row`) is not named by the path, and whose DELETE carries no schema (issue 38): it gets its
 * Route at `/records`, and each operation's note names the parameters left out and why.
 */
const SPEC = resolve("test/fixtures/importers/openapi/classes/keyed-rows.yaml");
const DROPPED = "the path parameters {dataset}, {version} are left out: a Route's base path holds no parameters";

describe("a resource keyed by several path parameters", () => {
  it("gives an operation without a schema the entity of its path's other operations", () => {
    const at = { file: "x" };
    const ops: ImportOperation[] = [
      { method: "GET", path: "/{a}/{b}/records", table: "Row", location: at },
      { method: "DELETE", path: "/{a}/{b}/records/{id}", location: at },
      { method: "GET", path: "/{a}/{b}/records/{id}/", location: at },
      { method: "POST", path: "/pet/{id}/uploadImage", location: at },
      { method: "GET", path: "/things", location: at },
      { method: "PUT", path: "/things/{id}", table: "Thing", location: at },
    ];
    sharePathEntities(ops);
    expect(ops.map((o) => o.table)).toEqual(["Row", "Row", "Row", undefined, "Thing", "Thing"]);
  });

  it("reads every operation as one of the entity's and plans its Route at the collection", async () => {
    const model = await readModel(SPEC, "openapi");
    expect(model.operations.map((o) => `${o.method} ${o.path} ${o.table}`)).toEqual([
      "GET /{dataset}/{version}/records Row",
      "POST /{dataset}/{version}/records Row",
      "GET /{dataset}/{version}/records/{id} Row",
      "DELETE /{dataset}/{version}/records/{id} Row",
    ]);
    const p = await planImport(model, {
      domain: "data",
      directory: "/nowhere",
      routes: "operations",
      pages: false,
      workflows: false,
      llm: false,
    });
    const route = p.checked.accepted.find((c) => c.kind === "Route");
    const spec = route?.data.spec as { base_path?: string; endpoints: { method: string; path: string }[] };
    expect(spec.base_path).toBe("/records");
    expect(spec.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "POST /", "GET /{id}", "DELETE /{id}"]);
    const note = (subject: string): ImportNote | undefined => p.notes.find((n) => n.subject === subject);
    expect(note("DELETE /{dataset}/{version}/records/{id}")).toMatchObject({
      kind: "changed",
      fact: "operation",
      reason: `served as DELETE /records/{id} (${DROPPED})`,
    });
    expect(p.notes.filter((n) => n.kind === "skipped" && n.fact === "operation")).toEqual([]);
  });

  it("generates an app that validates and serves the resource, every difference noted", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "charter-keyed-")), "data");
    const r = runCharter(["factory", "migrate", SPEC, "--domain", "data", "--output", dir, "--routes", "--no-llm", "--format", "json"]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    validates(dir);
    const { notes } = JSON.parse(r.stdout) as { notes: ImportNote[] };
    expect(notes.filter((n) => n.reason.includes(DROPPED))).toHaveLength(4);
    const j = await judgeOpenApi(SPEC, dir, notes);
    expect(j.silent).toEqual([]);
    // The judge finds each operation at another path than the input's, and a note naming it.
    expect(j.leftOut).toBeGreaterThanOrEqual(4);
    expect(readFileSync(join(dir, "routes", "row_api.contract.yaml"), "utf8")).toMatch(/base_path: \/records\n/);
  }, 180_000);
});
