import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { type Client, client } from "./http.js";

type Detail = { loc: (string | number)[]; msg: string; type: string; field: string | null; message: string };

/** The generated backend's 422 `validation_error`: every bad field at once, each in plain words. */
describe("generated FastAPI backend: validation messages", () => {
  let root: string;
  let app: RunningBackend;
  let api: Client;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "charter-validation-messages-"));
    app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir: join(root, "out"),
      backend: "memory",
      env: { AUTH_ENABLED: "false" },
    });
    api = client(app.url);
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const byField = (details: Detail[]) => Object.fromEntries(details.map((d) => [d.field, d.message]));

  it("reports every bad field of a body in one answer, in plain words, pydantic's items kept", async () => {
    const r = await api.post("/customers", { name: "x".repeat(121), email: "not-an-address", plan: "gold", website: 5, nickname: "Bo" });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("validation_error");
    expect(byField(r.body.details)).toEqual({
      name: "must be at most 120 characters",
      email: "must be a valid e-mail address",
      plan: "must be one of 'free', 'pro' or 'enterprise'",
      website: "must be text",
      nickname: "is not a field of this request",
    });
    // What clients of the earlier shape read is still there: loc, msg (pydantic's words) and type.
    const name = (r.body.details as Detail[]).find((d) => d.field === "name");
    expect(name).toMatchObject({ loc: ["body", "name"], type: "string_too_long", msg: "String should have at most 120 characters" });
    expect(r.body.message).toContain("name must be at most 120 characters");
    expect(r.body.message).toContain("email must be a valid e-mail address");
  });

  it("says what a missing, mistyped, out-of-range or malformed value must be", async () => {
    const r = await api.post("/tickets", {
      title: "ab",
      priority: "urgent",
      customer_id: "abc",
      due_date: "tomorrow",
      estimate_hours: 2000,
      story_points: 1.5,
      escalated: "yes",
      external_url: "ftp://example.com",
      attachments: ["ok", 7],
      custom_data: [1],
    });
    expect(r.status).toBe(422);
    expect(byField(r.body.details)).toEqual({
      title: "must be at least 3 characters",
      priority: "must be one of 'low', 'medium', 'high' or 'critical'",
      customer_id: "must be an id (a UUID)",
      due_date: "must be a date, YYYY-MM-DD",
      estimate_hours: "must be at most 1000",
      story_points: "must be a whole number",
      escalated: "must be true or false",
      external_url: "is not in the expected format",
      attachments: "item 2: must be text",
      custom_data: "must be a JSON object",
    });
    const missing = await api.post("/tickets", {});
    expect(byField(missing.body.details)).toEqual({ title: "is required", customer_id: "is required" });
    // No pydantic phrasing leaks into the plain messages.
    for (const d of [...r.body.details, ...missing.body.details] as Detail[]) {
      expect(d.message).not.toMatch(/Input should|String should|Value error|Field required|\^/);
    }
  });

  it("names query parameters and whole-body errors alike", async () => {
    const q = await api.get("/customers?limit=lots&sort=shoe_size");
    expect(q.status).toBe(422);
    expect(byField(q.body.details)).toMatchObject({ limit: "must be a whole number" });
    expect(byField(q.body.details).sort).toMatch(/^must be one of 'id', '-id', /);
    const notJson = await api.call("POST", "/customers", "{", { "content-type": "application/json" });
    expect(notJson.status).toBe(422);
    expect(notJson.body.details[0]).toMatchObject({ field: null, message: "is not valid JSON" });
  });

  it("says per field which required field an edit cleared, or which immutable one it changed", async () => {
    const c = await api.post("/customers", { name: "Plain Words", email: "plain@example.com" });
    expect(c.status).toBe(201);
    const cleared = await api.patch(`/customers/${c.body.id}`, { name: null });
    expect(cleared.status).toBe(422);
    expect(cleared.body.details).toMatchObject({ null_fields: ["name"], errors: [{ field: "name", message: "is required" }] });
  });
});
