import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { type Client, client } from "./http.js";

/** A POST whose raw response text is kept, so a replay can be compared byte for byte. */
async function rawPost(
  base: string,
  token: string,
  path: string,
  body: unknown,
  key?: string,
): Promise<{ status: number; text: string; headers: Headers }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  if (key !== undefined) headers["idempotency-key"] = key;
  const r = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: r.status, text: await r.text(), headers: r.headers };
}

/**
 * What writes mean in the generated API, on both repositories with the generated helpdesk app
 * started for real: the validation rules hold on every write (PATCH included, on the merged
 * record), a workflow guard holds against concurrent updates, and creates are idempotent under
 * an Idempotency-Key.
 */
describe.each(["memory", "postgres"] as const)("generated API write semantics on %s", (backend) => {
  let app: RunningBackend;
  let outDir: string;
  let db = "";
  let admin: Client;
  let agent: Client;
  let adminToken = "";
  let agentToken = "";
  let customerId = "";

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), `charter-semantics-${backend}-`));
    if (backend === "postgres") db = freshDatabase("charter_semantics");
    app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir,
      backend,
      ...(db ? { databaseUrl: databaseUrl(db) } : {}),
    });
    const anon = client(app.url);
    const login = async (email: string, password: string): Promise<string> => {
      const r = await anon.post("/auth/login", { email, password });
      expect(r.status).toBe(200);
      return r.body.access_token as string;
    };
    adminToken = await login("admin@example.com", "admin-password");
    agentToken = await login("alice@example.com", "agent-password");
    admin = client(app.url, adminToken);
    agent = client(app.url, agentToken);
    const c = await admin.post("/customers", { name: "Semantics Ltd", email: "s@example.com" });
    expect(c.status).toBe(201);
    customerId = c.body.id;
  });

  afterAll(async () => {
    await app?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  describe("validation rules on every write", () => {
    it("PATCH applies the create rule to the record as the change leaves it", async () => {
      const c = await admin.post("/customers", { name: "Patchy", email: "p@example.com" });
      expect(c.status).toBe(201);
      const refused = await admin.patch(`/customers/${c.body.id}`, { plan: "enterprise" });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({
        error: "validation_error",
        message: "Enterprise customers need a company",
        details: { rule: "plan != 'enterprise' or is_set(company)" },
      });
      expect((await admin.get(`/customers/${c.body.id}`)).body.plan).toBe("free");
      const ok = await admin.patch(`/customers/${c.body.id}`, { plan: "enterprise", company: "Acme" });
      expect(ok.status).toBe(200);
      // The merged record is what counts: removing the company alone now breaks the rule.
      const cleared = await admin.patch(`/customers/${c.body.id}`, { company: null });
      expect(cleared.status).toBe(422);
      expect((await admin.get(`/customers/${c.body.id}`)).body.company).toBe("Acme");
    });

    it("PATCH refuses what POST refuses, with the same status and error", async () => {
      const a = await admin.post("/agents", { name: "Rule", email: "rule@example.com", team: "support", max_open_tickets: 20 });
      expect(a.status).toBe(201);
      const post = await admin.post("/agents", { name: "R2", email: "r2@example.com", team: "support", max_open_tickets: 40 });
      const patch = await admin.patch(`/agents/${a.body.id}`, { max_open_tickets: 40 });
      expect(post.status).toBe(422);
      expect(patch.status).toBe(post.status);
      expect(patch.body.error).toBe(post.body.error);
      expect(patch.body.details).toEqual(post.body.details);
      expect((await admin.patch(`/agents/${a.body.id}`, { max_open_tickets: 40, team: "engineering" })).status).toBe(200);
      expect((await admin.patch(`/agents/${a.body.id}`, { team: "support" })).status).toBe(422);
    });

    it("PATCH applies the create's rules and its own", async () => {
      const t = await agent.post("/tickets", { title: "Rules", customer_id: customerId, description: "short" });
      expect(t.status).toBe(201);
      const critical = await agent.patch(`/tickets/${t.body.id}`, { priority: "critical" });
      expect(critical.status).toBe(422);
      expect(critical.body.message).toBe("A critical ticket needs a description of at least 20 characters");
      const own = await agent.patch(`/tickets/${t.body.id}`, { estimate_hours: 300 });
      expect(own.status).toBe(422);
      expect(own.body.error).toBe("estimate_too_large");
      const both = await agent.patch(`/tickets/${t.body.id}`, { priority: "critical", description: "A description long enough" });
      expect(both.status).toBe(200);
    });

    it("refuses immutable fields on PATCH with 422 naming the field", async () => {
      const a = await admin.post("/agents", { name: "Immutable", email: "imm@example.com" });
      const r = await admin.patch(`/agents/${a.body.id}`, { email: "changed@example.com", name: "Renamed" });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ error: "validation_error", details: { immutable_fields: ["email"] } });
      expect(r.body.message).toContain("email");
      expect((await admin.get(`/agents/${a.body.id}`)).body).toMatchObject({ email: "imm@example.com", name: "Immutable" });
    });
  });

  describe("workflow guards under concurrency", () => {
    it("never lets a transition through whose guard a concurrent update broke (100 rounds)", async () => {
      const rounds = 100;
      const outcomes = { moved: 0, refused: 0, bypassed: 0 };
      for (let i = 0; i < rounds; i++) {
        // An incident goes straight from new to in_progress (type override, no guard).
        const t = await agent.post("/tickets", { title: `Race ${i}`, customer_id: customerId, type: "incident" });
        expect(t.status).toBe(201);
        const id = t.body.id as string;
        expect((await agent.put(`/tickets/${id}/state`, { state: "in_progress" })).status).toBe(200);
        expect((await agent.patch(`/tickets/${id}`, { resolution: "Replaced the fuser unit" })).status).toBe(200);
        // The guard of in_progress -> resolved: len(resolution) >= 10. The update breaks it.
        // Sent in both orders: which one the server starts first is then up to the race.
        const sendMove = () => agent.put(`/tickets/${id}/state`, { state: "resolved" });
        const sendUpdate = () => agent.patch(`/tickets/${id}`, { resolution: "short" });
        const [move, update] =
          i % 2 === 0
            ? await Promise.all([sendMove(), sendUpdate()])
            : await Promise.all([sendUpdate(), sendMove()]).then(([u, m]) => [m, u] as const);
        expect(update.status).toBe(200);
        if (move.status === 200) {
          if (String(move.body.resolution ?? "").length < 10) outcomes.bypassed++;
          else outcomes.moved++;
        } else {
          expect(move.status, JSON.stringify(move.body)).toBe(422);
          expect(move.body.error).toBe("guard_failed");
          outcomes.refused++;
        }
      }
      console.log(`guard race on ${backend}: ${JSON.stringify(outcomes)}`);
      expect(outcomes.bypassed).toBe(0);
      expect(outcomes.moved + outcomes.refused).toBe(rounds);
      if (backend === "postgres") {
        // The outbox holds the record as each move wrote it: no resolved event with a short resolution.
        const bad = psql(db, "SELECT count(*) FROM events WHERE name = 'ticket_resolved' AND length(data->>'resolution') < 10", [
          "-At",
        ]).trim();
        expect(bad).toBe("0");
        const resolved = psql(db, "SELECT count(*) FROM events WHERE name = 'ticket_resolved'", ["-At"]).trim();
        expect(Number(resolved)).toBe(outcomes.moved);
      }
    });

    it("lets only one of two concurrent moves from the same state through", async () => {
      for (let i = 0; i < 20; i++) {
        const t = await agent.post("/tickets", { title: `Fork ${i}`, customer_id: customerId, type: "incident" });
        await agent.put(`/tickets/${t.body.id}/state`, { state: "in_progress" });
        await agent.patch(`/tickets/${t.body.id}`, { resolution: "Replaced the fuser unit" });
        const moves = await Promise.all([
          agent.put(`/tickets/${t.body.id}/state`, { state: "resolved" }),
          agent.put(`/tickets/${t.body.id}/state`, { state: "waiting_on_customer" }),
        ]);
        const final = (await agent.get(`/tickets/${t.body.id}`)).body.state;
        const ok = moves.filter((m) => m.status === 200);
        // Either one move won and the other was refused from the new state, or both are valid in
        // sequence (waiting_on_customer -> resolved is allowed; resolved -> waiting_on_customer is not).
        for (const m of moves.filter((x) => x.status !== 200)) expect(m.status).toBe(400);
        expect(ok.length).toBeGreaterThanOrEqual(1);
        if (ok.length === 2) expect(final).toBe("resolved");
        else expect(final).toBe(ok[0]?.body.state);
      }
    });
  });

  describe("idempotent creates", () => {
    const count = async (name: string): Promise<number> => {
      const r = await admin.get(`/customers?q=${encodeURIComponent(name)}`);
      expect(r.status).toBe(200);
      return (r.body.items as { name: string }[]).filter((c) => c.name === name).length;
    };

    it("answers a repeated key with the first response and creates one record", async () => {
      const body = { name: "Idem One", email: "idem1@example.com" };
      const first = await rawPost(app.url, adminToken, "/customers", body, "key-one");
      expect(first.status).toBe(201);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      const again = await rawPost(app.url, adminToken, "/customers", body, "key-one");
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      // The draft's sf-string form of the same key, and the same body with its keys reordered.
      const quoted = await rawPost(app.url, adminToken, "/customers", { email: body.email, name: body.name }, '"key-one"');
      expect(quoted.text).toBe(first.text);
      expect(await count("Idem One")).toBe(1);
      if (backend === "postgres") {
        expect(psql(db, "SELECT count(*) FROM customers WHERE name = 'Idem One'", ["-At"]).trim()).toBe("1");
        const kept = psql(db, `SELECT status, body::jsonb = $$${first.text}$$::jsonb FROM idempotency_keys`, ["-At"]).trim();
        expect(kept.split("\n")).toContain("201|t");
      }
    });

    it("refuses the same key with another body with 422 and the error body", async () => {
      const first = await rawPost(app.url, adminToken, "/customers", { name: "Idem Two", email: "idem2@example.com" }, "key-two");
      expect(first.status).toBe(201);
      const other = await rawPost(app.url, adminToken, "/customers", { name: "Idem Two bis", email: "idem2@example.com" }, "key-two");
      expect(other.status).toBe(422);
      expect(JSON.parse(other.text)).toMatchObject({ error: "idempotency_key_reused" });
      expect(JSON.parse(other.text).message).toContain("Idempotency-Key");
      expect(await count("Idem Two bis")).toBe(0);
    });

    it("creates one record for concurrent requests with the same key, all answered alike", async () => {
      const body = { name: "Idem Three", email: "idem3@example.com" };
      const replies = await Promise.all(Array.from({ length: 8 }, () => rawPost(app.url, adminToken, "/customers", body, "key-three")));
      for (const r of replies) expect(r.status, r.text).toBe(201);
      expect(new Set(replies.map((r) => r.text)).size).toBe(1);
      expect(replies.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1);
      expect(await count("Idem Three")).toBe(1);
    });

    it("keeps keys apart per caller and creates without a key every time", async () => {
      const ticket = { title: "Same key, two callers", customer_id: customerId };
      const a = await rawPost(app.url, adminToken, "/tickets", ticket, "shared-key");
      const b = await rawPost(app.url, agentToken, "/tickets", ticket, "shared-key");
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(JSON.parse(a.text).id).not.toBe(JSON.parse(b.text).id);
      const body = { name: "No Key", email: "nokey@example.com" };
      expect((await rawPost(app.url, adminToken, "/customers", body)).status).toBe(201);
      expect((await rawPost(app.url, adminToken, "/customers", body)).status).toBe(201);
      expect(await count("No Key")).toBe(2);
    });

    it("does not keep a refused create: the corrected request with the same key goes through", async () => {
      const bad = await rawPost(
        app.url,
        adminToken,
        "/customers",
        { name: "Idem Four", email: "i4@example.com", plan: "enterprise" },
        "key-four",
      );
      expect(bad.status).toBe(422);
      const good = await rawPost(app.url, adminToken, "/customers", { name: "Idem Four", email: "i4@example.com" }, "key-four");
      expect(good.status).toBe(201);
      expect(await count("Idem Four")).toBe(1);
    });

    it("declares the header, its statuses and the login's 429 in the OpenAPI document", async () => {
      const doc = (await client(app.url).get("/openapi.json")).body;
      const create = doc.paths["/tickets"].post;
      expect(create.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false })]),
      );
      expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "409", "422"]));
      expect(create.responses["422"].description).toContain("Idempotency-Key");
      expect(doc.paths["/auth/login"].post.responses["429"].headers["Retry-After"]).toBeDefined();
    });
  });
});
