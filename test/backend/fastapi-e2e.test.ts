import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { type Client, client, eventually, signJwt, startFakeHealer } from "./http.js";

/**
 * Runs the generated helpdesk backend under uvicorn and drives it over HTTP, once on the memory
 * backend and once on a fresh PostgreSQL database. The tests of one suite build on each other
 * (records created early are moved and deleted later), so they run in order.
 */
describe.each(["memory", "postgres"] as const)("generated FastAPI backend on %s", (backend) => {
  let app: RunningBackend;
  let anon: Client;
  let admin: Client;
  let agent: Client;
  let viewer: Client;
  let healer: Awaited<ReturnType<typeof startFakeHealer>>;
  let outDir: string;
  let db = "";
  const customers: string[] = [];
  let agentId = "";

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), `charter-backend-${backend}-`));
    healer = await startFakeHealer();
    if (backend === "postgres") db = freshDatabase("charter_backend_e2e");
    app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir,
      backend,
      ...(db ? { databaseUrl: databaseUrl(db) } : {}),
      env: { SVC_HEALER_URL: healer.url },
    });
    anon = client(app.url);
    const login = async (email: string, password: string): Promise<string> => {
      const r = await anon.post("/auth/login", { email, password });
      expect(r.status).toBe(200);
      return r.body.access_token as string;
    };
    admin = client(app.url, await login("admin@example.com", "admin-password"));
    agent = client(app.url, await login("alice@example.com", "agent-password"));
    viewer = client(app.url, await login("victor@example.com", "viewer-password"));
  });

  /**
   * Walks `path` one record a page by cursor with `sort`, checking each page's total, and requires
   * the same records in the same order as one page of them all. Returns the ids walked.
   */
  async function walkByCursor(path: string, sort: string, total: number): Promise<string[]> {
    const ids = (body: { items: { id: string }[] }): string[] => body.items.map((c) => c.id);
    const query = sort ? `&sort=${sort}` : "";
    const all = await agent.get(`${path}?limit=1000${query}`);
    expect(all.body.next_cursor, sort).toBeNull();
    const walked: string[] = [];
    let next: string | null = null;
    do {
      const after: string = next ? `&after=${encodeURIComponent(next)}` : "";
      const page = await agent.get(`${path}?limit=1${query}${after}`);
      expect(page.status, sort).toBe(200);
      expect(page.body.total, sort).toBe(total);
      walked.push(...ids(page.body));
      next = page.body.next_cursor;
    } while (next !== null && walked.length <= total);
    expect(walked, sort).toEqual(ids(all.body));
    return walked;
  }

  afterAll(async () => {
    await app?.stop();
    await healer?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  it("answers /health with the domain and serves /docs", async () => {
    const health = await anon.get("/health");
    expect(health).toMatchObject({ status: 200, body: { status: "ok", domain: "helpdesk" } });
    const docs = await anon.get("/docs");
    expect(docs.status).toBe(200);
    expect(String(docs.body)).toContain("swagger");
    const openapi = await anon.get("/openapi.json");
    expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(["/tickets", "/tickets/{record_id}/state", "/auth/login"]));
  });

  describe("authentication", () => {
    it("logs in with the stored role, never the requested one", async () => {
      const r = await anon.post("/auth/login", { email: "victor@example.com", password: "viewer-password", role: "admin" });
      expect(r.status).toBe(200);
      expect(r.body.token_type).toBe("bearer");
      const me = await client(app.url, r.body.access_token).get("/auth/me");
      expect(me.body).toEqual({ id: "victor", email: "victor@example.com", role: "viewer" });
      const claims = JSON.parse(Buffer.from(String(r.body.access_token).split(".")[1] ?? "", "base64url").toString());
      expect(Object.keys(claims).sort()).toEqual(["email", "exp", "iat", "iss", "pwd", "role", "sub"]);
      expect(claims.exp - claims.iat).toBe(3600);
    });

    it("refuses a wrong password, an unknown user and passwordless login", async () => {
      for (const body of [
        { email: "admin@example.com", password: "wrong" },
        { email: "nobody@example.com", password: "admin-password" },
        { id: "admin", email: "admin@example.com", role: "admin" },
      ]) {
        const r = await anon.post("/auth/login", body);
        expect(r.status).toBe(401);
        expect(r.body.error).toBe("unauthorized");
      }
    });

    it("refreshes a token and answers /auth/me", async () => {
      const r = await admin.post("/auth/refresh");
      expect(r.status).toBe(200);
      const me = await client(app.url, r.body.access_token).get("/auth/me");
      expect(me.body.role).toBe("admin");
    });

    it("answers 401 with WWW-Authenticate for a missing, expired or tampered token", async () => {
      const missing = await anon.get("/tickets");
      expect(missing.status).toBe(401);
      expect(missing.headers.get("www-authenticate")).toBe("Bearer");
      expect(missing.body).toMatchObject({ error: "unauthorized" });
      const now = Math.floor(Date.now() / 1000);
      const base = { sub: "admin", email: "admin@example.com", role: "admin", iss: "helpdesk" };
      const expired = signJwt({ ...base, iat: now - 7200, exp: now - 3600 }, TEST_AUTH_SECRET);
      const forged = signJwt({ ...base, iat: now, exp: now + 3600 }, "another-secret-0123456789abcdef0123456789");
      const victorToken = (await anon.post("/auth/login", { email: "victor@example.com", password: "viewer-password" })).body
        .access_token as string;
      const [h, p, s] = victorToken.split(".");
      const payload = JSON.parse(Buffer.from(p ?? "", "base64url").toString());
      const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, role: "admin" })).toString("base64url")}.${s}`;
      for (const token of [expired, forged, tampered, "not-a-jwt"]) {
        const r = await client(app.url, token).get("/tickets");
        expect(r.status, token).toBe(401);
        expect(r.headers.get("www-authenticate")).toBe("Bearer");
      }
    });

    it("answers 403 for a role the endpoint does not allow", async () => {
      expect((await viewer.get("/agents")).status).toBe(200);
      const r = await viewer.post("/customers", { name: "Nope", email: "n@example.com" });
      expect(r.status).toBe(403);
      expect(r.body.error).toBe("forbidden");
      expect((await agent.post("/agents", { name: "X", email: "x@example.com" })).status).toBe(403);
    });
  });

  describe("customers: CRUD, sequence numbers, list queries", () => {
    it("creates records with ids, timestamps, creator and sequential numbers", async () => {
      const plans = ["free", "pro", "pro", "enterprise"];
      for (const [i, plan] of plans.entries()) {
        const r = await agent.post("/customers/", {
          name: `Customer ${String.fromCharCode(68 - i)}`,
          email: `c${i}@example.com`,
          plan,
          ...(plan === "enterprise" ? { company: "Big Co" } : {}),
        });
        expect(r.status).toBe(201);
        expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/);
        expect(r.body.number).toBe(`CUS-0000${i + 1}`);
        expect(r.body.created_by).toBe("alice");
        expect(Date.parse(r.body.created_at)).not.toBeNaN();
        expect(r.body._links.self).toBe(`/customers/${r.body.id}`);
        customers.push(r.body.id);
      }
    });

    it("gets a record with and without a trailing slash", async () => {
      const id = customers[0];
      for (const path of [`/customers/${id}`, `/customers/${id}/`]) {
        const r = await agent.get(path);
        expect(r.status).toBe(200);
        expect(r.body.id).toBe(id);
      }
    });

    it("pages with limit and offset and reports the total", async () => {
      const page = await agent.get("/customers?limit=2&offset=1");
      expect(page.body.total).toBe(4);
      expect(page.body.items).toHaveLength(2);
      const past = await agent.get("/customers?limit=2&offset=10");
      expect(past.body).toEqual({ items: [], total: 4, next_cursor: null });
    });

    it("pages with cursors in the same order as offsets, for every sort, nulls included", async () => {
      // `company` is null for some customers: their place in the order must survive the cursor.
      for (const sort of ["", "name", "-number", "company", "-company", "-created_at"]) {
        expect(await walkByCursor("/customers", sort, 4), sort).toHaveLength(4);
      }
    });

    it("skips the count on request and refuses bad cursors with 422", async () => {
      const first = await agent.get("/customers?limit=2&with_total=false");
      expect(first.body.total).toBeNull();
      expect(first.body.items).toHaveLength(2);
      const cursor = encodeURIComponent(first.body.next_cursor);
      for (const bad of ["not-a-cursor", "W10", `${cursor}&sort=name`, `${cursor}&offset=1`]) {
        const r = await agent.get(`/customers?after=${bad}`);
        expect(r.status, bad).toBe(422);
        expect(r.body.error).toBe("validation_error");
      }
    });

    it("filters, sorts and searches", async () => {
      const pro = await agent.get("/customers?plan=pro");
      expect(pro.body.total).toBe(2);
      expect(pro.body.items.every((c: { plan: string }) => c.plan === "pro")).toBe(true);
      const sorted = await agent.get("/customers?sort=name");
      expect(sorted.body.items.map((c: { name: string }) => c.name)).toEqual(["Customer A", "Customer B", "Customer C", "Customer D"]);
      const desc = await agent.get("/customers?sort=-number");
      expect(desc.body.items[0].number).toBe("CUS-00004");
      const q = await agent.get("/customers?q=cUsToMeR%20b");
      expect(q.body.total).toBe(1);
      expect(q.body.items[0].name).toBe("Customer B");
      const both = await agent.get("/customers?plan=pro&q=customer c");
      expect(both.body.total).toBe(1);
    });

    it("applies the route's validation rule with its on_fail status, error and message", async () => {
      const r = await agent.post("/customers", { name: "Corp", email: "corp@example.com", plan: "enterprise" });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ error: "validation_error", message: "Enterprise customers need a company" });
    });

    it("updates partially and refreshes updated_at and updated_by", async () => {
      const before = (await agent.get(`/customers/${customers[1]}`)).body;
      const r = await admin.patch(`/customers/${customers[1]}`, { company: "New Co" });
      expect(r.status).toBe(200);
      expect(r.body.company).toBe("New Co");
      expect(r.body.name).toBe(before.name);
      expect(r.body.updated_by).toBe("admin");
      expect(r.body.created_by).toBe("alice");
      expect(Date.parse(r.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
    });

    it("deletes with 204 and answers 404 afterwards", async () => {
      const extra = await admin.post("/customers", { name: "Temp", email: "t@example.com" });
      expect(extra.body.number).toBe("CUS-00005");
      const del = await admin.delete(`/customers/${extra.body.id}`);
      expect(del.status).toBe(204);
      expect(del.body).toBeNull();
      expect((await admin.get(`/customers/${extra.body.id}`)).status).toBe(404);
      expect((await admin.delete(`/customers/${extra.body.id}`)).status).toBe(404);
    });

    it("answers 404 not_found for absent records on every operation", async () => {
      const absent = "00000000-0000-4000-8000-000000000000";
      for (const r of [
        await admin.get(`/tickets/${absent}`),
        await admin.patch(`/tickets/${absent}`, { title: "Whatever" }),
        await admin.delete(`/tickets/${absent}`),
        await admin.put(`/tickets/${absent}/state`, { state: "triaged" }),
      ]) {
        expect(r.status).toBe(404);
        expect(r.body.error).toBe("not_found");
      }
    });
  });

  describe("agents: immutable fields, constraints, rules", () => {
    it("creates an agent, then refuses to change its immutable email", async () => {
      const r = await admin.post("/agents", { name: "Alice", email: "alice@example.com", team: "support", max_open_tickets: 20 });
      expect(r.status).toBe(201);
      agentId = r.body.id;
      const upd = await admin.patch(`/agents/${agentId}`, { email: "other@example.com" });
      expect(upd.status).toBe(422);
      expect(upd.body).toMatchObject({ error: "validation_error", details: { immutable_fields: ["email"] } });
      const nulls = await admin.patch(`/agents/${agentId}`, { name: null });
      expect(nulls.status).toBe(422);
    });

    it("checks field constraints and the contract rule", async () => {
      expect((await admin.post("/agents", { name: "B", email: "b@example.com", max_open_tickets: 51 })).status).toBe(422);
      const rule = await admin.post("/agents", { name: "B", email: "b@example.com", max_open_tickets: 40 });
      expect(rule.status).toBe(422);
      expect(rule.body.error).toBe("validation_error");
      expect(rule.body.details.rule).toContain("max_open_tickets");
      const ok = await admin.post("/agents", { name: "B", email: "b@example.com", max_open_tickets: 40, team: "engineering" });
      expect(ok.status).toBe(201);
    });
  });

  describe("tickets: workflow, guards, side effects, soft delete", () => {
    const open = async (extra: Record<string, unknown> = {}): Promise<string> => {
      const r = await agent.post("/tickets", { title: "Printer on fire", customer_id: customers[0], ...extra });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.id as string;
    };
    const move = (id: string, state: string) => agent.put(`/tickets/${id}/state`, { state });

    it("starts new tickets in the initial state with a number", async () => {
      const r = await agent.post("/tickets", { title: "First", customer_id: customers[0], tags: ["printer"] });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ state: "new", number: "TKT-00001", priority: "medium", tags: ["printer"], created_by: "alice" });
      // The soft-delete marks start at their defaults on both backends, and only DELETE sets them.
      expect(r.body).toMatchObject({ is_deleted: false, deleted_at: null, deleted_by: null });
      const marked = await agent.post("/tickets", { title: "Sneaky", customer_id: customers[0], is_deleted: true });
      expect(marked.status).toBe(422);
      expect(JSON.stringify(marked.body)).toContain("is_deleted");
      expect(r.body.reference_code).toMatch(/^[0-9a-f-]{36}$/);
    });

    it("applies the create rule (critical tickets need a long description)", async () => {
      const r = await agent.post("/tickets", { title: "Down", customer_id: customers[0], priority: "critical", description: "short" });
      expect(r.status).toBe(422);
      expect(r.body.message).toBe("A critical ticket needs a description of at least 20 characters");
      await open({ priority: "critical", description: "The whole office cannot print since this morning" });
    });

    it("walks every allowed transition and refuses the others", async () => {
      const id = await open();
      const refused = await move(id, "in_progress");
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: "invalid_transition", details: { allowed: ["triaged", "cancelled"] } });
      expect((await move(id, "triaged")).body.state).toBe("triaged");
      const guard = await move(id, "in_progress");
      expect(guard.status).toBe(422);
      expect(guard.body).toMatchObject({ error: "guard_failed", details: { missing_fields: ["assignee_id"] } });
      await agent.patch(`/tickets/${id}`, { assignee_id: agentId });
      expect((await move(id, "in_progress")).body.state).toBe("in_progress");
      expect((await move(id, "waiting_on_customer")).body.state).toBe("waiting_on_customer");
      expect((await move(id, "in_progress")).body.state).toBe("in_progress");
      const noResolution = await move(id, "resolved");
      expect(noResolution.body).toMatchObject({ error: "guard_failed", details: { missing_fields: ["resolution"] } });
      await agent.patch(`/tickets/${id}`, { resolution: "short" });
      const condition = await move(id, "resolved");
      expect(condition.status).toBe(422);
      expect(condition.body).toMatchObject({ error: "guard_failed", details: { condition: "len(resolution) >= 10" } });
      await agent.patch(`/tickets/${id}`, { resolution: "Replaced the toner" });
      expect((await move(id, "resolved")).body.state).toBe("resolved");
      const reopened = await move(id, "in_progress");
      expect(reopened.body).toMatchObject({ state: "in_progress", escalated: true });
      expect((await move(id, "resolved")).status).toBe(200);
      expect((await move(id, "closed")).body.state).toBe("closed");
      const terminal = await move(id, "in_progress");
      expect(terminal.status).toBe(400);
      expect(terminal.body.details.allowed).toEqual([]);
      const unknown = await move(await open(), "flying");
      expect(unknown.status).toBe(400);
    });

    it("cancels from new and honours type overrides", async () => {
      expect((await move(await open(), "cancelled")).body.state).toBe("cancelled");
      const incident = await open({ type: "incident" });
      expect((await move(incident, "in_progress")).body.state).toBe("in_progress");
      expect((await move(await open({ type: "request" }), "in_progress")).status).toBe(400);
    });

    it("holds the close guard condition for critical tickets", async () => {
      const id = await open({ priority: "critical", description: "The whole office cannot print since this morning" });
      await agent.patch(`/tickets/${id}`, { assignee_id: agentId, resolution: "Replaced the toner" });
      for (const s of ["triaged", "in_progress", "resolved"]) expect((await move(id, s)).status).toBe(200);
      const r = await move(id, "closed");
      expect(r.body).toMatchObject({ error: "guard_failed", details: { condition: "priority != 'critical' or escalated == true" } });
    });

    it("applies the update rule with its own error name", async () => {
      const id = await open();
      const r = await agent.patch(`/tickets/${id}`, { estimate_hours: 500 });
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("estimate_too_large");
      expect((await agent.patch(`/tickets/${id}/`, { estimate_hours: 12.5 })).body.estimate_hours).toBe(12.5);
      expect((await agent.patch(`/tickets/${id}`, { reporter_email: "x@example.com" })).status).toBe(422);
    });

    it("soft-deletes: the record leaves lists and gets but is kept", async () => {
      const id = await open({ title: "To be removed" });
      const before = (await admin.get("/tickets?limit=1000")).body.total as number;
      expect((await agent.delete(`/tickets/${id}`)).status).toBe(403);
      expect((await admin.delete(`/tickets/${id}`)).status).toBe(204);
      expect((await admin.get(`/tickets/${id}`)).status).toBe(404);
      expect((await admin.get("/tickets?limit=1000")).body.total).toBe(before - 1);
      if (backend === "postgres") {
        expect(psql(db, `SELECT is_deleted, deleted_by FROM tickets WHERE id = '${id}'`, ["-At"]).trim()).toBe("t|admin");
      }
    });

    it.runIf(backend === "postgres")("answers the unfiltered ticket total from the counters (list_total: counter)", async () => {
      const sql = (q: string): number => Number(psql(db, q, ["-At"]).trim());
      const alive = sql("SELECT count(*) FROM tickets WHERE is_deleted IS NOT TRUE");
      const total = async (): Promise<number> => (await admin.get("/tickets?limit=1")).body.total as number;
      expect(sql("SELECT sum(n) FROM row_counts WHERE table_name = 'tickets'")).toBe(alive);
      expect(await total()).toBe(alive);
      // A counter set off shows in the answer: the total is read, not counted.
      psql(db, "UPDATE row_counts SET n = n + 1000 WHERE table_name = 'tickets' AND shard = 0");
      try {
        expect(await total()).toBe(alive + 1000);
        // A filtered total is still a count of the matching rows.
        const open = sql("SELECT count(*) FROM tickets WHERE is_deleted IS NOT TRUE AND state = 'new'");
        expect((await admin.get("/tickets?state=new&limit=1")).body.total).toBe(open);
      } finally {
        psql(db, "UPDATE row_counts SET n = n - 1000 WHERE table_name = 'tickets' AND shard = 0");
      }
      // Customers keep the default, a count per list: no counters, and their totals stay exact.
      expect(sql("SELECT count(*) FROM row_counts WHERE table_name = 'customers'")).toBe(0);
      expect((await admin.get("/customers?limit=1")).body.total).toBe(sql("SELECT count(*) FROM customers"));
    });

    it("filters by state and other fields, sorts and searches tickets", async () => {
      const cancelled = await agent.get("/tickets?state=cancelled");
      expect(cancelled.body.total).toBe(1);
      const critical = await agent.get("/tickets?priority=critical&sort=-number");
      expect(critical.body.total).toBe(2);
      expect(critical.body.items[0].number > critical.body.items[1].number).toBe(true);
      expect((await agent.get("/tickets?q=PRINTER%20ON")).body.total).toBeGreaterThan(3);
      expect((await agent.get(`/tickets?customer_id=${customers[1]}`)).body.total).toBe(0);
      expect((await agent.get("/tickets?escalated=true")).body.total).toBe(1);
    });

    it("pages tickets with cursors through ties of sort columns that are never null", async () => {
      // Several tickets share a state or a priority: the cursor's bound on such a column (the
      // index seeks to it) must still reach the rest of the tie, in id order, both ways.
      const total = (await agent.get("/tickets?limit=1")).body.total as number;
      for (const sort of ["state", "-state", "title", "-updated_at", "priority", "-priority"]) {
        expect(await walkByCursor("/tickets", sort, total), sort).toHaveLength(total);
      }
    });

    it("refuses a reference to a record that does not exist with 409 conflict", async () => {
      const r = await agent.post("/tickets", { title: "Orphan", customer_id: "00000000-0000-4000-8000-000000000001" });
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("conflict");
    });

    it.runIf(backend === "postgres")("writes events to the outbox in the same transaction", () => {
      const rows = psql(db, "SELECT name, count(*) FROM events GROUP BY name ORDER BY name", ["-At"]).trim().split("\n");
      const counts = Object.fromEntries(rows.map((r) => r.split("|")));
      expect(counts.customer_created).toBe("5");
      expect(Number(counts.ticket_created)).toBeGreaterThan(5);
      expect(counts.ticket_resolved).toBe("3");
      expect(counts.ticket_reopened).toBe("1");
      expect(Number(counts.ticket_state_changed)).toBeGreaterThan(10);
      const data = psql(db, "SELECT data->>'state' FROM events WHERE name = 'ticket_reopened'", ["-At"]).trim();
      expect(data).toBe("in_progress");
    });
  });

  describe("references on delete (as the foreign keys: required RESTRICT, optional SET NULL)", () => {
    it("refuses to delete a customer that tickets still refer to with 409 conflict", async () => {
      const r = await admin.delete(`/customers/${customers[0]}`);
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("conflict");
      expect((await admin.get(`/customers/${customers[0]}`)).status).toBe(200);
    });

    it("counts soft-deleted tickets: their rows, and references, are kept", async () => {
      const customer = await admin.post("/customers", { name: "Leaving Co", email: "leaving@example.com" });
      const ticket = await agent.post("/tickets", { title: "The only ticket", customer_id: customer.body.id });
      expect(ticket.status).toBe(201);
      expect((await admin.delete(`/tickets/${ticket.body.id}`)).status).toBe(204);
      const r = await admin.delete(`/customers/${customer.body.id}`);
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("conflict");
      const lone = await admin.post("/customers", { name: "Lone Co", email: "lone@example.com" });
      expect((await admin.delete(`/customers/${lone.body.id}`)).status).toBe(204);
    });

    it("clears an optional reference when its target is deleted", async () => {
      const temp = await admin.post("/agents", { name: "Temp Agent", email: "temp-agent@example.com" });
      const ticket = await agent.post("/tickets", { title: "Assigned", customer_id: customers[0], assignee_id: temp.body.id });
      expect(ticket.body.assignee_id).toBe(temp.body.id);
      expect((await admin.delete(`/agents/${temp.body.id}`)).status).toBe(204);
      const after = await agent.get(`/tickets/${ticket.body.id}`);
      expect(after.status).toBe(200);
      expect(after.body.assignee_id).toBeNull();
      expect(after.body.customer_id).toBe(customers[0]);
    });
  });

  describe("values both backends hold alike", () => {
    it("takes a datetime without an offset as UTC, so it sorts and filters with the others", async () => {
      const naive = await agent.post("/tickets", { title: "Naive due", customer_id: customers[0], due_at: "2031-01-01T10:00:00" });
      const aware = await agent.post("/tickets", { title: "Aware due", customer_id: customers[0], due_at: "2031-01-01T09:00:00+00:00" });
      expect(naive.status).toBe(201);
      expect(aware.status).toBe(201);
      expect(Date.parse(naive.body.due_at)).toBe(Date.parse("2031-01-01T10:00:00Z"));
      expect(naive.body.due_at).toMatch(/(\+00:00|Z)$/);
      // Ascending: records without a due date come last.
      const sorted = await agent.get("/tickets?sort=due_at&limit=2");
      expect(sorted.status).toBe(200);
      expect(sorted.body.items.map((t: { title: string }) => t.title)).toEqual(["Aware due", "Naive due"]);
      const filtered = await agent.get(`/tickets?due_at=${encodeURIComponent("2031-01-01T10:00:00")}`);
      expect(filtered.body.total).toBe(1);
      expect(filtered.body.items[0].id).toBe(naive.body.id);
    });

    it("filters dates and datetimes by inclusive ranges, a bound without an offset taken as UTC", async () => {
      const open = async (title: string, due_date: string, due_at: string): Promise<string> => {
        const r = await agent.post("/tickets", { title, customer_id: customers[0], due_date, due_at });
        expect(r.status).toBe(201);
        return r.body.id as string;
      };
      const a = await open("Range A", "2032-03-01", "2032-03-01T08:00:00Z");
      const b = await open("Range B", "2032-03-02", "2032-03-02T08:00:00+02:00");
      const c = await open("Range C", "2032-03-03", "2032-03-03T08:00:00Z");
      const ids = async (query: string): Promise<string[]> => {
        const r = await agent.get(`/tickets?${query}`);
        expect(r.status, query).toBe(200);
        expect(r.body.total, query).toBe(r.body.items.length);
        return r.body.items.map((t: { id: string }) => t.id);
      };
      // Both bounds inclusive; a record without the field is in no range.
      expect(await ids("due_date_from=2032-03-01&due_date_to=2032-03-02&sort=due_date")).toEqual([a, b]);
      expect(await ids("due_date_from=2032-03-02&sort=due_date")).toEqual([b, c]);
      expect(await ids("due_date_to=2032-03-01&due_date_from=2032-03-01")).toEqual([a]);
      expect(await ids("due_date_from=2032-03-04")).toEqual([]);
      // B is due at 06:00 UTC: a bound without an offset is UTC, as in bodies and equality filters.
      const at = (s: string): string => encodeURIComponent(s);
      expect(await ids(`due_at_from=${at("2032-03-02T06:00:00")}&due_at_to=${at("2032-03-03T08:00:00Z")}&sort=due_at`)).toEqual([b, c]);
      expect(await ids(`due_at_from=${at("2032-03-02T06:00:01")}&due_at_to=${at("2032-03-03T10:00:00+02:00")}`)).toEqual([c]);
      // With the equality filters, and through cursor pages (the keyset joins the range).
      expect(await ids(`due_date_from=2032-03-01&title=${at("Range B")}`)).toEqual([b]);
      const first = await agent.get("/tickets?due_date_from=2032-03-01&sort=-due_date&limit=2");
      expect(first.body.items.map((t: { id: string }) => t.id)).toEqual([c, b]);
      expect(first.body.total).toBe(3);
      const next = await agent.get(`/tickets?due_date_from=2032-03-01&sort=-due_date&limit=2&after=${at(first.body.next_cursor)}`);
      expect(next.body.items.map((t: { id: string }) => t.id)).toEqual([a]);
      // Timestamps take ranges too.
      const created = (await agent.get(`/tickets/${b}`)).body.created_at as string;
      const since = await agent.get(`/tickets?created_at_from=${at(created)}&due_date_from=2032-03-01&sort=due_date`);
      expect(since.body.items.map((t: { id: string }) => t.id)).toEqual([b, c]);
      expect(await ids(`created_at_to=${at(created)}&due_date_from=2032-03-01&sort=due_date`)).toEqual([a, b]);
      // Parsed strictly to the field's type, like every query parameter.
      for (const q of [
        "due_date_from=2032-13-01",
        "due_date_from=1900000000",
        "due_date_to=2032-03-01T00:00:00Z",
        "due_date_to=tomorrow",
        "due_at_from=2032-03-01",
        "due_at_to=1900000000",
        "created_at_from=yesterday",
      ]) {
        const r = await agent.get(`/tickets?${q}`);
        expect(r.status, q).toBe(422);
        expect(r.body.error, q).toBe("validation_error");
      }
      const openapi = (await anon.get("/openapi.json")).body;
      const params = openapi.paths["/tickets"].get.parameters as { name: string; schema: { anyOf?: { format?: string }[] } }[];
      const param = (name: string) => params.find((p) => p.name === name);
      expect(param("due_date_from")?.schema.anyOf?.[0]?.format).toBe("date");
      expect(param("due_at_to")?.schema.anyOf?.[0]?.format).toBe("date-time");
      expect(param("created_at_from")).toBeDefined();
      expect(param("title_from")).toBeUndefined();
    });

    it("refuses integers beyond 64 bits with 422, in fields, filters and JSON objects", async () => {
      expect((await agent.get("/tickets?story_points=99999999999999999999")).status).toBe(422);
      const body = `{"title": "Huge", "customer_id": "${customers[0]}", "custom_data": {"n": 123456789012345678901234567890}}`;
      const r = await agent.post("/tickets", body);
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("validation_error");
    });
  });

  describe("bad input", () => {
    it("treats SQL injection in filters and search as plain values", async () => {
      const total = (await admin.get("/customers")).body.total as number;
      for (const path of [
        `/customers?name=${encodeURIComponent("' OR '1'='1")}`,
        `/customers?email=${encodeURIComponent("x'; DROP TABLE customers; --")}`,
        `/customers?q=${encodeURIComponent("%' OR 1=1 --")}`,
        `/customers?q=${encodeURIComponent("%")}`,
        `/customers?q=${encodeURIComponent("_")}`,
      ]) {
        const r = await admin.get(path);
        expect(r.status, path).toBe(200);
        expect(r.body.total, path).toBe(0);
      }
      expect((await admin.get("/customers")).body.total).toBe(total);
    });

    it("refuses unknown or injected sort keys", async () => {
      for (const sort of ["name;DROP TABLE customers", "password", "-", "name desc", "(select 1)"]) {
        const r = await admin.get(`/customers?sort=${encodeURIComponent(sort)}`);
        expect(r.status, sort).toBe(422);
        expect(r.body.error).toBe("validation_error");
      }
    });

    it("refuses limits outside 1..1000 and negative offsets", async () => {
      for (const q of ["limit=1001", "limit=0", "limit=-1", "offset=-1", "limit=abc"]) {
        expect((await admin.get(`/customers?${q}`)).status, q).toBe(422);
      }
      expect((await admin.get("/customers?limit=1000")).status).toBe(200);
    });

    it("refuses wrong types, unknown fields, bad enums, malformed JSON and bad ids with 422", async () => {
      const cases: unknown[] = [
        { title: "Typed", customer_id: customers[0], story_points: "many" },
        { title: "Typed", customer_id: customers[0], sneaky: true },
        { title: "Typed", customer_id: customers[0], priority: "urgent" },
        { title: "Typed", customer_id: "not-a-uuid" },
        { title: "Typed", customer_id: customers[0], id: "00000000-0000-4000-8000-000000000009" },
        { customer_id: customers[0] },
        "{not json",
      ];
      for (const body of cases) {
        const r = await admin.post("/tickets", body);
        expect(r.status, JSON.stringify(body)).toBe(422);
        expect(r.body.error).toBe("validation_error");
      }
      expect((await admin.get("/tickets/not-a-uuid")).status).toBe(422);
      expect((await admin.post("/customers", { name: "E", email: "not-an-email" })).status).toBe(422);
    });

    it("refuses bodies over 1 MiB with 413", async () => {
      const r = await admin.post("/customers", { name: "Big", email: "big@example.com", company: "x".repeat(1_100_000) });
      expect(r.status).toBe(413);
      expect(r.body.error).toBe("payload_too_large");
    });
  });

  describe.runIf(backend === "postgres")("unhandled exceptions", () => {
    it("answers 500 without a stack trace and reports to the Healer", async () => {
      psql(db, "ALTER TABLE customers DROP COLUMN website;");
      const r = await admin.get(`/customers/${customers[0]}`);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: "internal_error", message: "an internal error occurred", request_id: r.headers.get("x-request-id") });
      const report = await eventually(() => healer.received[0]);
      expect(report).toMatchObject({
        path: "/healer/ingest",
        source: "runtime",
        context: { path: `/customers/${customers[0]}`, method: "GET", status_code: 500 },
      });
      // The path and method, not a contract: the Healer decides which contract it is about.
      expect(report).not.toHaveProperty("contract_fqn");
      expect(String(report.error)).toContain("does not exist");
      expect(String((report.context as { stacktrace: string }).stacktrace)).toContain("UndefinedColumnError");
    });

    it("still answers 500 promptly when no Healer listens", async () => {
      await healer.close();
      const started = Date.now();
      const r = await admin.get("/customers");
      expect(r.status).toBe(500);
      expect(Date.now() - started).toBeLessThan(5000);
      expect((await anon.get("/health")).status).toBe(200);
    });
  });
});
