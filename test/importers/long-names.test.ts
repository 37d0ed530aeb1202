import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_IDENTIFIER_BYTES } from "../../src/compiler/naming.js";
import { readModel } from "../../src/importers/factory/index.js";
import { planImport, refusal } from "../../src/importers/pipeline.js";
import { files } from "./support.js";

/**
 * A schema name whose table would pass PostgreSQL's identifier limit (the compiler refuses such a
 * table) is imported under a shortened table name, with a note: never a refused import.
 */
describe("long names", () => {
  it("shortens a table name past 63 bytes and says so", async () => {
    const long = "api_create_model_eval_dataset_upload_presigned_urls_input_public";
    const dir = files({
      "api.yaml": `openapi: "3.0.0"
info: { title: t, version: "1" }
paths:
  /things:
    post:
      requestBody: { content: { application/json: { schema: { $ref: "#/components/schemas/${long}" } } } }
      responses: { "201": { description: ok, content: { application/json: { schema: { $ref: "#/components/schemas/${long}" } } } } }
components:
  schemas:
    ${long}:
      type: object
      properties: { name: { type: string }, size: { type: integer } }
`,
    });
    const model = await readModel(join(dir, "api.yaml"), "openapi");
    const p = await planImport(model, {
      domain: "d",
      directory: "/nowhere",
      routes: "operations",
      pages: false,
      workflows: false,
      llm: false,
    });
    expect(refusal(p.checked)).toBeNull();
    const entity = p.checked.accepted.find((c) => c.kind === "Entity");
    const table = ((entity?.data.spec ?? {}) as { table?: string }).table ?? "";
    expect(Buffer.byteLength(table)).toBeLessThanOrEqual(MAX_IDENTIFIER_BYTES);
    expect(table.startsWith(long.slice(0, 40))).toBe(true);
    expect(p.notes.find((n) => n.fact === "table" && n.kind === "changed" && /longer than PostgreSQL/.test(n.reason))?.reason).toContain(
      table,
    );
  });
});
