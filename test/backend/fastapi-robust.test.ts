import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { type Client, client, type Reply } from "./http.js";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked generically.
type Json = any;

/** A 4xx with the error body every failure shares ({error, message, details}). */
function expectRefused(reply: Reply, status: number): void {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(typeof reply.body?.error, JSON.stringify(reply.body)).toBe("string");
  expect(typeof reply.body?.message).toBe("string");
}

/**
 * Inputs that once answered 500 (NUL, lone surrogates, huge numbers and offsets, deep
 * JSON, other media types), coercions that once passed silently, and the 405 `Allow` header: each
 * on both repositories, over real HTTP against the generated helpdesk with auth on.
 */
describe.each(["memory", "postgres"] as const)("the generated API refuses bad input with 4xx on %s", (backend) => {
  let root: string;
  let app: RunningBackend;
  let anon: Client;
  let admin: Client;
  let token = "";
  let customerId = "";
  let ticketId = "";

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `charter-robust-${backend}-`));
    const db = backend === "postgres" ? freshDatabase("charter_backend_robust") : "";
    app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir: join(root, "out"),
      backend,
      ...(db ? { databaseUrl: databaseUrl(db) } : {}),
    });
    anon = client(app.url);
    const login = await anon.post("/auth/login", { email: "admin@example.com", password: "admin-password" });
    token = login.body.access_token as string;
    admin = client(app.url, token);
    const customer = await admin.post("/customers", { name: "Robust Co", email: "robust@example.com" });
    expect(customer.status).toBe(201);
    customerId = customer.body.id as string;
    const ticket = await admin.post("/tickets", { title: "A sturdy ticket", customer_id: customerId });
    expect(ticket.status).toBe(201);
    ticketId = ticket.body.id as string;
  });

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const ticket = (extra: string): string => `{"title": "Fine title", "customer_id": "${customerId}", ${extra}}`;

  it("refuses NUL bytes in bodies, arrays, JSON objects, queries and the login", async () => {
    expectRefused(await admin.post("/tickets", ticket('"description": "a\\u0000b"')), 422);
    expectRefused(await admin.post("/tickets", ticket('"tags": ["ok", "a\\u0000"]')), 422);
    expectRefused(await admin.post("/tickets", ticket('"custom_data": {"k\\u0000": 1}')), 422);
    expectRefused(await admin.post("/tickets", ticket('"custom_data": {"k": ["\\u0000"]}')), 422);
    expectRefused(await admin.patch(`/tickets/${ticketId}`, '{"resolution": "\\u0000"}'), 422);
    expectRefused(await admin.get("/tickets?title=%00"), 422);
    expectRefused(await admin.get("/tickets?q=%00"), 422);
    expectRefused(await anon.post("/auth/login", '{"email": "admin@example.com\\u0000", "password": "x"}'), 422);
    expectRefused(await anon.post("/auth/login", '{"email": "admin@example.com", "password": "\\u0000"}'), 422);
  });

  it("refuses lone surrogates, also inside arrays, and later list pages still answer", async () => {
    expectRefused(await admin.post("/tickets", ticket('"description": "\\ud800"')), 422);
    expectRefused(await admin.post("/tickets", ticket('"tags": ["\\udfff"]')), 422);
    expectRefused(await admin.post("/tickets", ticket('"attachments": ["x", "\\ud83d"]')), 422);
    expectRefused(await admin.post("/customers", '{"name": "\\ud800", "email": "s@example.com"}'), 422);
    expectRefused(await anon.post("/auth/login", '{"email": "admin@example.com", "password": "\\ud800"}'), 422);
    // A surrogate pair is a character like any other.
    expect((await admin.post("/tickets", ticket('"description": "\\ud83d\\ude00"'))).status).toBe(201);
    const page = await admin.get("/tickets?limit=1000");
    expect(page.status).toBe(200);
  });

  it("refuses over-long strings, huge numbers and offsets, and non-finite numbers", async () => {
    expectRefused(await admin.post("/tickets", ticket(`"external_url": "https://${"x".repeat(10)}", "title": "${"t".repeat(201)}"`)), 422);
    expectRefused(await admin.post("/tickets", ticket(`"description": "${"d".repeat(1_100_000)}"`)), 413);
    expectRefused(await admin.post("/tickets", ticket('"story_points": 99999999999999999999999')), 422);
    expectRefused(await admin.post("/agents", '{"name": "Big", "email": "big@example.com", "max_open_tickets": 9223372036854775808}'), 422);
    expectRefused(await admin.post("/tickets", ticket('"estimate_hours": 1e400')), 422);
    expectRefused(await admin.post("/tickets", ticket('"estimate_hours": NaN')), 422);
    expectRefused(await admin.post("/tickets", ticket('"estimate_hours": Infinity')), 422);
    expectRefused(await admin.post("/tickets", ticket('"estimate_hours": -Infinity')), 422);
    expectRefused(await admin.post("/tickets", ticket('"custom_data": {"x": NaN}')), 422);
    expectRefused(await admin.get("/tickets?estimate_hours=nan"), 422);
    expectRefused(await admin.get("/tickets?estimate_hours=inf"), 422);
    expectRefused(await admin.get("/tickets?story_points=9223372036854775808"), 422);
    expectRefused(await admin.get("/tickets?offset=9223372036854775808"), 422);
    expectRefused(await admin.get("/tickets?offset=99999999999999999999999"), 422);
    expectRefused(await admin.get("/tickets?limit=9223372036854775808"), 422);
    expect((await admin.get("/tickets?offset=9223372036854775807")).status).toBe(200);
  });

  it("takes in a JSON field what its schema calls a JSON value: safe integers exact, nothing rounded", async () => {
    const body = '"custom_data": {"big": 9007199254740991, "all": [1, 2.5, "s", null, true, {"k": []}]}';
    const created = await admin.post("/tickets", ticket(body));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const raw = await (await fetch(`${app.url}/tickets/${created.body.id}`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(raw).toContain('"big":9007199254740991');
    expect(raw).toContain('"all":[1,2.5,"s",null,true,{"k":[]}]');
    // Beyond what a JSON client holds exactly: refused, as the schema says, never stored rounded.
    expectRefused(await admin.post("/tickets", ticket('"custom_data": {"n": 9007199254740993}')), 422);
    expectRefused(await admin.post("/tickets", ticket('"custom_data": {"n": [19466946478962792409858048]}')), 422);
    expectRefused(await admin.post("/tickets", ticket('"custom_data": {"n": 1e300}')), 422);
    // The schema states it: keys without NUL (propertyNames, not patternProperties, which would leave
    // other keys open), and the same for every nested object.
    const doc = (await anon.get("/openapi.json")).body as Json;
    // (An optional field: the object or null.)
    const field = doc.components.schemas.TicketCreate.properties.custom_data.anyOf.find((s: Json) => s.type === "object");
    expect(field.propertyNames).toEqual({ pattern: "^[^\\x00]*$" });
    expect(field.patternProperties).toBeUndefined();
    const value = doc.components.schemas[field.additionalProperties.$ref.split("/").at(-1)];
    const nested = value.anyOf.find((s: Json) => s.type === "object");
    expect(nested.propertyNames).toEqual({ pattern: "^[^\\x00]*$" });
    expect(value.anyOf.find((s: Json) => s.type === "string").pattern).toBe("^[^\\x00]*$");
    for (const type of ["integer", "number"]) {
      expect(value.anyOf.find((s: Json) => s.type === type)).toMatchObject({ minimum: -9007199254740991, maximum: 9007199254740991 });
    }
  });

  it("refuses deep JSON and bodies that are not JSON", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const deepReply = await admin.post("/tickets", ticket(`"custom_data": {"x": ${deep}}`));
    expect(deepReply.status).toBeGreaterThanOrEqual(400);
    expect(deepReply.status).toBeLessThan(500);
    expectRefused(await admin.post("/tickets", ticket(`"custom_data": {"x": ${"[".repeat(300)}${"]".repeat(300)}}`)), 422);
    expectRefused(await admin.call("POST", "/tickets", undefined, { "content-type": "text/plain" }), 422);
    const plain = await fetch(`${app.url}/tickets`, {
      method: "POST",
      headers: { "content-type": "text/plain", authorization: await loginHeader() },
      body: ticket('"description": "x"'),
    });
    expect(plain.status).toBe(415);
    expect((await plain.json()).error).toBe("unsupported_media_type");
    const form = await fetch(`${app.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "email=admin@example.com&password=admin-password",
    });
    expect(form.status).toBe(415);
    expectRefused(await admin.post("/tickets", "{not json"), 422);
  });

  async function loginHeader(): Promise<string> {
    const r = await anon.post("/auth/login", { email: "admin@example.com", password: "admin-password" });
    return `Bearer ${r.body.access_token}`;
  }

  it("coerces nothing: booleans, numbers in strings, numbers as dates are refused", async () => {
    expectRefused(await admin.post("/tickets", ticket('"story_points": true')), 422);
    expectRefused(await admin.post("/tickets", ticket('"story_points": "7"')), 422);
    expectRefused(await admin.post("/tickets", ticket('"story_points": 7.5')), 422);
    expectRefused(await admin.post("/tickets", ticket('"estimate_hours": "3"')), 422);
    expectRefused(await admin.post("/tickets", ticket('"estimate_hours": false')), 422);
    expectRefused(await admin.post("/tickets", ticket('"escalated": 1')), 422);
    expectRefused(await admin.post("/tickets", ticket('"escalated": "true"')), 422);
    expectRefused(await admin.post("/tickets", ticket('"due_date": 0')), 422);
    expectRefused(await admin.post("/tickets", ticket('"due_date": "1700000000"')), 422);
    expectRefused(await admin.post("/tickets", ticket('"due_at": 1700000000')), 422);
    expectRefused(await admin.post("/tickets", ticket('"title": 12345')), 422);
    expectRefused(await admin.patch(`/tickets/${ticketId}`, '{"story_points": true}'), 422);
    expectRefused(await admin.get("/tickets?updated_at=0.5"), 422);
    expectRefused(await admin.get("/tickets?due_date=0"), 422);
    expectRefused(await admin.get("/tickets?story_points=abc"), 422);
    expectRefused(await admin.get("/tickets?story_points=1.5"), 422);
    // What JSON means exactly is kept: 7.0 is the integer 7, an ISO date is a date.
    const exact = await admin.post(
      "/tickets",
      ticket('"story_points": 7.0, "estimate_hours": 2, "due_date": "2030-01-02", "escalated": true'),
    );
    expect(exact.status, JSON.stringify(exact.body)).toBe(201);
    expect(exact.body).toMatchObject({ story_points: 7, estimate_hours: 2, due_date: "2030-01-02", escalated: true });
    const filtered = await admin.get("/tickets?story_points=7&escalated=true&due_date=2030-01-02");
    expect(filtered.status).toBe(200);
    expect(filtered.body.items.map((t: { id: string }) => t.id)).toContain(exact.body.id);
  });

  it("declares every failure status with the error body, the bearer scheme, typed /health and compiled rules", async () => {
    const doc = (await anon.get("/openapi.json")).body as Json;
    expect(doc.components.securitySchemes).toMatchObject({ HTTPBearer: { type: "http", scheme: "bearer" } });
    expect(doc.components.schemas.ErrorBody).toMatchObject({ required: ["error", "message"] });
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
          if (status === "4XX") {
            // What uvicorn answers, as plain text, to a request it cannot parse (declared on /health).
            expect(response.content, `${method} ${path} ${status}`).toEqual({ "text/plain": { schema: { type: "string" } } });
            continue;
          }
          if (Number(status) < 400) continue;
          expect(response.content["application/json"].schema, `${method} ${path} ${status}`).toEqual({
            $ref: "#/components/schemas/ErrorBody",
          });
        }
        const open = path === "/health" || path === "/auth/login";
        // Every operation states its security: none for the public ones (issue 40).
        if (open) expect(op.security, `${method} ${path} security`).toEqual([]);
        else expect(op.security, `${method} ${path} security`).toEqual([{ HTTPBearer: [] }]);
        expect(Object.keys(op.responses), `${method} ${path}`).toContain("500");
      }
    }
    const codes = (path: string, method: string): string[] => Object.keys(doc.paths[path][method].responses).sort();
    expect(codes("/tickets/{record_id}", "get")).toEqual(["200", "401", "403", "404", "422", "500"]);
    expect(codes("/tickets/{record_id}", "delete")).toEqual(["204", "401", "403", "404", "409", "422", "500"]);
    expect(codes("/tickets/{record_id}/state", "put")).toEqual(["200", "400", "401", "403", "404", "409", "413", "415", "422", "500"]);
    expect(codes("/auth/login", "post")).toEqual(["200", "400", "401", "404", "413", "415", "422", "429", "500"]);
    expect(doc.paths["/auth/login"].post.responses["429"].headers).toHaveProperty("Retry-After");
    expect(doc.paths["/tickets/{record_id}"].get.responses["401"].headers).toHaveProperty("WWW-Authenticate");
    expect(doc.paths["/health"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Health" });
    expect(doc.components.schemas.Health).toMatchObject({ required: ["status", "domain"], properties: { status: { const: "ok" } } });
    // `estimate_hours == null or estimate_hours <= 200` is in the PATCH schema; the cross-field rule of POST is described.
    expect(doc.components.schemas.TicketUpdate.properties.estimate_hours).toMatchObject({ maximum: 200 });
    const create = doc.paths["/tickets"].post;
    expect(create["x-validation-rules"]).toEqual([
      expect.objectContaining({ rule: "priority != 'critical' or len(description) >= 20", in_schema: false }),
    ]);
    expect(create.description).toContain("cannot express");
    // Immutable fields are read-only on PATCH, required ones never null, sort keys an enum.
    expect(doc.components.schemas.TicketUpdate.properties.reporter_email).toMatchObject({ readOnly: true });
    expect(doc.components.schemas.AgentUpdate.properties.name.type).toBe("string");
    const sort = doc.paths["/tickets"].get.parameters.find((p: { name: string }) => p.name === "sort");
    expect(JSON.stringify(sort.schema)).toContain('"-created_at"');
    expect(doc.paths["/tickets"].get["x-query-rules"]).toHaveLength(2);
  });

  it("answers a method a path does not serve with 405 and the methods it does in Allow", async () => {
    for (const method of ["OPTIONS", "PUT", "PATCH"]) {
      const r = await fetch(`${app.url}/tickets`, { method });
      expect(r.status, method).toBe(405);
      expect(r.headers.get("allow")).toBe("GET, HEAD, POST");
      expect((await r.json()).error).toBe("method_not_allowed");
    }
    const one = await admin.call("POST", `/tickets/${ticketId}`);
    expect(one.status).toBe(405);
    expect(one.headers.get("allow")).toBe("DELETE, GET, HEAD, PATCH");
    const state = await admin.call("GET", `/tickets/${ticketId}/state`);
    expect(state.headers.get("allow")).toBe("PUT");
    const login = await anon.call("GET", "/auth/login");
    expect(login.status).toBe(405);
    expect(login.headers.get("allow")).toBe("POST");
  });
});
