import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { VENV_PYTHON } from "../support/python.js";
import { type Client, client } from "./http.js";

/**
 * A domain without an auth Infra contract (the helpdesk example minus infra/auth.contract.yaml),
 * generated and run: no auth package, every route open, every caller the anonymous administrator.
 */
describe.each(["memory", "postgres"] as const)("generated FastAPI backend without an auth contract on %s", (backend) => {
  let root: string;
  let app: RunningBackend;
  let api: Client;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `charter-noauth-${backend}-`));
    const domainDir = join(root, "helpdesk");
    cpSync("examples/helpdesk", domainDir, { recursive: true });
    rmSync(join(domainDir, "infra", "auth.contract.yaml"));
    const db = backend === "postgres" ? freshDatabase("charter_backend_noauth") : "";
    app = await startGeneratedBackend({
      domainDir,
      outDir: join(root, "out"),
      backend,
      ...(db ? { databaseUrl: databaseUrl(db) } : {}),
    });
    api = client(app.url);
  });

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("defaults AUTH_ENABLED to false and generates no auth package", () => {
    const env = { ...process.env };
    delete env.AUTH_ENABLED;
    const out = execFileSync(VENV_PYTHON, ["-c", "from app.config import settings; print(settings.AUTH_ENABLED)"], {
      cwd: app.backendDir,
      env: { ...env, DATABASE_BACKEND: "memory" },
      encoding: "utf8",
    });
    expect(out.trim()).toBe("False");
    expect(() => readFileSync(join(app.backendDir, "app", "auth", "__init__.py"))).toThrow();
    expect(app.logs()).not.toMatch(/AUTH_SECRET|Traceback/);
  });

  it("has no /auth endpoints", async () => {
    for (const [method, path] of [
      ["POST", "/auth/login"],
      ["POST", "/auth/refresh"],
      ["GET", "/auth/me"],
    ] as const) {
      const r = await api.call(method, path, method === "POST" ? { email: "admin@example.com", password: "admin-password" } : undefined);
      expect(r.status, path).toBe(404);
      expect(r.body.error).toBe("not_found");
    }
    const openapi = await api.get("/openapi.json");
    expect(Object.keys(openapi.body.paths).filter((p) => p.startsWith("/auth"))).toEqual([]);
  });

  it("serves every route of every Route contract without a token, as the anonymous administrator", async () => {
    expect((await api.get("/health")).body).toEqual({ status: "ok", domain: "helpdesk", pending_destructive: [] });
    const customer = await api.post("/customers", { name: "Open Co", email: "open@example.com" });
    expect(customer.status).toBe(201);
    expect(customer.body).toMatchObject({ number: "CUS-00001", created_by: "anonymous", updated_by: "anonymous" });
    const agent = await api.post("/agents/", { name: "Anna", email: "anna@example.com" });
    expect(agent.status).toBe(201);
    const ticket = await api.post("/tickets", { title: "No token needed", customer_id: customer.body.id });
    expect(ticket.status).toBe(201);
    expect(ticket.body).toMatchObject({ state: "new", created_by: "anonymous" });

    for (const path of ["/customers", "/agents", "/tickets"]) {
      const list = await api.get(path);
      expect(list.status, path).toBe(200);
      expect(list.body.total, path).toBe(1);
    }
    expect((await api.get(`/customers/${customer.body.id}`)).status).toBe(200);
    expect((await api.get(`/agents/${agent.body.id}`)).status).toBe(200);
    expect((await api.get(`/tickets/${ticket.body.id}`)).status).toBe(200);
    expect((await api.patch(`/customers/${customer.body.id}`, { company: "Open" })).body.company).toBe("Open");
    expect((await api.patch(`/agents/${agent.body.id}`, { team: "billing" })).body.team).toBe("billing");
    expect((await api.patch(`/tickets/${ticket.body.id}`, { assignee_id: agent.body.id })).status).toBe(200);
    expect((await api.put(`/tickets/${ticket.body.id}/state`, { state: "triaged" })).body.state).toBe("triaged");

    // Delete is admin-only in the contracts; without auth everybody is the administrator.
    expect((await api.delete(`/tickets/${ticket.body.id}`)).status).toBe(204);
    expect((await api.delete(`/agents/${agent.body.id}`)).status).toBe(204);
    expect((await api.get(`/tickets/${ticket.body.id}`)).status).toBe(404);
  });

  it("ignores an Authorization header: there is nothing to check it against", async () => {
    const withToken = client(app.url, "not-a-jwt");
    expect((await withToken.get("/customers")).status).toBe(200);
    expect((await withToken.post("/agents", { name: "Ben", email: "ben@example.com" })).status).toBe(201);
  });
});
