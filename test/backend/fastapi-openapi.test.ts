import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { type Client, client, type Reply } from "./http.js";

/**
 * The handlers answer with orjson bytes and bypass FastAPI's response validation (for speed), so
 * nothing at runtime ties the bytes to the declared response models. This suite does: it reads
 * the app's own /openapi.json and validates every response body of every operation against the
 * schema declared for it, on both backends, with formats (uuid, date-time, email) checked too.
 */
describe.each(["memory", "postgres"] as const)("declared response schemas match the bytes on %s", (backend) => {
  let root: string;
  let app: RunningBackend;
  let api: Client;
  let openapi: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [name, re] of Object.entries({
    uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    "date-time": /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
    date: /^\d{4}-\d\d-\d\d$/,
    email: /^[^@\s]+@[^@\s]+$/,
  })) {
    ajv.addFormat(name, re);
  }
  const validators = new Map<string, ValidateFunction>();

  /** Validates a reply against the schema of `method path` for its status. */
  function expectDeclared(method: string, path: string, reply: Reply): void {
    const key = `${method} ${path} ${reply.status}`;
    let validate = validators.get(key);
    if (!validate) {
      const schema = openapi.paths[path]?.[method]?.responses[String(reply.status)]?.content?.["application/json"]?.schema;
      expect(schema, `${key} declares a JSON schema`).toBeDefined();
      validate = ajv.compile({
        $ref: `openapi.json#/paths/${path.replace(/~/g, "~0").replace(/\//g, "~1")}/${method}/responses/${reply.status}/content/application~1json/schema`,
      });
      validators.set(key, validate);
    }
    const ok = validate(reply.body);
    expect(ok, `${key}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(reply.body)}`).toBe(true);
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `charter-openapi-${backend}-`));
    const domainDir = join(root, "helpdesk");
    cpSync("examples/helpdesk", domainDir, { recursive: true });
    rmSync(join(domainDir, "infra", "auth.contract.yaml"));
    const db = backend === "postgres" ? freshDatabase("charter_backend_openapi") : "";
    app = await startGeneratedBackend({ domainDir, outDir: join(root, "out"), backend, ...(db ? { databaseUrl: databaseUrl(db) } : {}) });
    api = client(app.url);
    openapi = (await api.get("/openapi.json")).body;
    ajv.addSchema(openapi as object, "openapi.json");
  });

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("declares the required fields as present and non-null, and enums as enums", () => {
    const schemas = (
      openapi as unknown as { components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> } }
    ).components.schemas;
    const ticket = schemas.TicketPublic;
    expect(ticket?.required).toEqual(expect.arrayContaining(["id", "title", "customer_id", "state", "created_at", "_links", "priority"]));
    expect(ticket?.properties.title).toMatchObject({ type: "string", minLength: 3 });
    expect(ticket?.properties.state).toMatchObject({ enum: expect.arrayContaining(["new", "closed"]) });
    expect(JSON.stringify(ticket?.properties.priority)).toContain('"enum":["low","medium","high","critical"]');
  });

  it("answers every operation with a body its declared schema accepts", async () => {
    const customer = await api.post("/customers", { name: "Schema Co", email: "schema@example.com" });
    expect(customer.status).toBe(201);
    expectDeclared("post", "/customers", customer);
    const agent = await api.post("/agents", { name: "Ada", email: "ada@example.com", team: "support" });
    expectDeclared("post", "/agents", agent);
    const created = await api.post("/tickets", {
      title: "Printer on fire",
      customer_id: customer.body.id,
      custom_data: { floor: 3, tags: ["x"] },
      due_at: "2030-01-01T10:00:00+02:00",
      due_date: "2030-01-02",
      reporter_email: "r@example.com",
    });
    expect(created.status).toBe(201);
    expectDeclared("post", "/tickets", created);
    const id = created.body.id as string;
    expectDeclared("get", "/tickets/{record_id}", await api.get(`/tickets/${id}`));
    const list = await api.get("/tickets?limit=1");
    expectDeclared("get", "/tickets", list);
    expectDeclared("get", "/tickets", await api.get("/tickets?limit=1&with_total=false"));
    expectDeclared("get", "/customers", await api.get("/customers"));
    expectDeclared("get", "/agents", await api.get("/agents"));
    const patched = await api.patch(`/tickets/${id}`, { priority: null, description: null, assignee_id: agent.body.id });
    expect(patched.status).toBe(200);
    expectDeclared("patch", "/tickets/{record_id}", patched);
    const moved = await api.put(`/tickets/${id}/state`, { state: "triaged" });
    expect(moved.status).toBe(200);
    expectDeclared("put", "/tickets/{record_id}/state", moved);
  });
});
