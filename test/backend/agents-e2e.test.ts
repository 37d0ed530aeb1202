import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { FakeLlm, NO_PROVIDER_ENV } from "../support/fake-llm.js";
import { until } from "../support/poll.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { type Client, client } from "./http.js";

// biome-ignore lint/suspicious/noExplicitAny: runs are JSON checked field by field.
type Run = any;

/**
 * The helpdesk's triage agent in the generated backend, against a scripted OpenAI-compatible
 * server on 127.0.0.1: on the memory backend and on a fresh PostgreSQL database.
 */
describe.each(["memory", "postgres"] as const)("agents of the generated backend on %s", (backend) => {
  let app: RunningBackend;
  let fake: FakeLlm;
  let admin: Client;
  let outDir: string;
  let db = "";
  let customer = "";

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), `charter-agents-${backend}-`));
    fake = await FakeLlm.start();
    if (backend === "postgres") db = freshDatabase(`charter_agents_${backend}`);
    app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir,
      backend,
      ...(db ? { databaseUrl: databaseUrl(db) } : {}),
      // A hanging model is given up after 4 s; the dispatcher looks for work every 0.2 s.
      env: fake.env({ SVC_AI_TIMEOUT: "4", DISPATCH_POLL_SECONDS: "0.2" }),
    });
    const anon = client(app.url);
    const login = await anon.post("/auth/login", { email: "admin@example.com", password: "admin-password" });
    admin = client(app.url, login.body.access_token);
    const c = await admin.post("/customers", { name: "Agent Test Co", email: "agents@example.com", plan: "pro" });
    expect(c.status).toBe(201);
    customer = c.body.id;
  });

  afterAll(async () => {
    await app?.stop();
    await fake?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  const runsOf = async (id: string): Promise<Run[]> => {
    const r = await admin.get(`/tickets/${id}/agent-runs`);
    expect(r.status).toBe(200);
    return r.body.items;
  };
  /** The finished runs of a ticket, once there are `n`. */
  const finishedRuns = (id: string, n = 1): Promise<Run[]> =>
    until(async () => {
      const runs = (await runsOf(id)).filter((r) => r.decision !== "running");
      return runs.length >= n ? runs : undefined;
    });
  const openTicket = async (title: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> => {
    const r = await admin.post("/tickets", { title, customer_id: customer, description: `About ${title}`, ...extra });
    expect(r.status).toBe(201);
    return r.body;
  };

  it("a confident reply updates the listed fields; the run is recorded with its prompt hash", async () => {
    fake.reply({ json: { updates: { priority: "high", type: "incident" }, confidence: 0.92, reason: "outage words" } });
    const t = await openTicket("Checkout is down for everyone");
    expect(t).toMatchObject({ priority: "medium", type: "request" });
    const [run] = await finishedRuns(String(t.id));
    expect(run).toMatchObject({
      agent: "triage_agent",
      event: "ticket_created",
      decision: "applied",
      confidence: 0.92,
      changes: { priority: "high", type: "incident" },
      ignored: [],
      reason: "outage words",
      error: null,
    });
    expect(run.prompt_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(run.duration_ms).toBeGreaterThanOrEqual(0);
    const after = await admin.get(`/tickets/${t.id}`);
    expect(after.body).toMatchObject({ priority: "high", type: "incident", title: "Checkout is down for everyone" });
    // The prompt carries the approach, the constraints, the input fields and what each update may hold.
    const request = fake.requests[0];
    expect(request?.body.response_format).toEqual({ type: "json_object" });
    const system = request?.body.messages?.find((m) => m.role === "system")?.content ?? "";
    expect(system).toContain("Classify the ticket text against past tickets");
    expect(system).toContain("Never lower the priority of an escalated ticket");
    expect(system).toContain("priority: string; one of: low, medium, high, critical");
    expect(fake.userPrompt(0)).toContain("Checkout is down for everyone");
    expect(fake.userPrompt(0)).toContain("About Checkout is down for everyone");
  });

  it("below the threshold (0.8) the fallback leaves the ticket unchanged", async () => {
    fake.reply({ json: { updates: { priority: "critical" }, confidence: 0.79, reason: "not sure" } });
    const t = await openTicket("Printer makes a noise");
    const [run] = await finishedRuns(String(t.id));
    expect(run).toMatchObject({ decision: "fallback", confidence: 0.79, changes: {}, error: null });
    expect((await admin.get(`/tickets/${t.id}`)).body.priority).toBe("medium");
  });

  it("ignores the fields of a reply outside output.updates", async () => {
    fake.reply({
      json: { updates: { priority: "low", title: "Renamed by the model", escalated: true }, confidence: 0.95, reason: "x" },
    });
    const t = await openTicket("Please add a dark mode");
    const [run] = await finishedRuns(String(t.id));
    expect(run).toMatchObject({ decision: "applied", changes: { priority: "low" }, ignored: ["escalated", "title"] });
    const after = (await admin.get(`/tickets/${t.id}`)).body;
    expect(after).toMatchObject({ priority: "low", title: "Please add a dark mode", escalated: false });
  });

  it("a value the entity refuses (not in the enum) ends in the fallback, the ticket unchanged", async () => {
    fake.reply({ json: { updates: { priority: "urgent!!" }, confidence: 0.99, reason: "x" } });
    const t = await openTicket("Enum check");
    const [run] = await finishedRuns(String(t.id));
    expect(run.decision).toBe("fallback");
    expect(run.error).toContain("refused");
    expect((await admin.get(`/tickets/${t.id}`)).body.priority).toBe("medium");
  });

  it("a hanging model: the create answers at once, the run ends in the fallback at the timeout", async () => {
    fake.reply({ hang: true });
    const t = await openTicket("The model will not answer this one");
    // The create has answered while the agent's run has not finished: the model is still silent.
    const pending = (await runsOf(String(t.id))).filter((r) => r.decision !== "running");
    expect(pending).toEqual([]);
    const [run] = await finishedRuns(String(t.id));
    expect(run).toMatchObject({ decision: "fallback", confidence: null });
    expect(run.error).toContain("no reply within 4 s");
    expect((await admin.get(`/tickets/${t.id}`)).body.priority).toBe("medium");
  });

  it("garbage, an HTTP error and a malformed confidence all end in the fallback", async () => {
    fake.reply(
      { content: "I think it is urgent, maybe." },
      { status: 503 },
      { json: { updates: { priority: "high" }, confidence: "very" } },
    );
    const ids: string[] = [];
    for (const title of ["Garbage reply", "Provider down", "Bad confidence"]) ids.push(String((await openTicket(title)).id));
    const runs = await Promise.all(ids.map((id) => finishedRuns(id)));
    for (const [run] of runs) {
      expect(run.decision).toBe("fallback");
      expect(run.error).toBeTruthy();
    }
    const errors = runs.map(([run]) => String(run.error)).join("\n");
    expect(errors).toContain("HTTP 503");
    expect(errors).toContain('the reply is not {"updates"');
    for (const id of ids) expect((await admin.get(`/tickets/${id}`)).body.priority).toBe("medium");
  });

  it("ai_integration: a reopened ticket (ticket_reopened) is triaged again", async () => {
    fake.reply({ json: { updates: { type: "problem" }, confidence: 0.9, reason: "first" } });
    const t = await openTicket("Comes back after the fix");
    const id = String(t.id);
    await finishedRuns(id);
    expect((await admin.patch(`/tickets/${id}`, { assignee_id: null, resolution: "Fixed the cache config" })).status).toBe(200);
    for (const state of ["triaged"]) expect((await admin.put(`/tickets/${id}/state`, { state })).status).toBe(200);
    const agentRecord = await admin.post("/agents", { name: "Bob", email: `bob-${backend}@example.com` });
    expect(agentRecord.status).toBe(201);
    expect((await admin.patch(`/tickets/${id}`, { assignee_id: agentRecord.body.id })).status).toBe(200);
    for (const state of ["in_progress", "resolved"]) expect((await admin.put(`/tickets/${id}/state`, { state })).status).toBe(200);
    fake.reply({ json: { updates: { priority: "high" }, confidence: 0.85, reason: "reopened" } });
    expect((await admin.put(`/tickets/${id}/state`, { state: "in_progress" })).status).toBe(200);
    const runs = await finishedRuns(id, 2);
    expect(runs.map((r: Run) => r.event).sort()).toEqual(["ticket_created", "ticket_reopened"]);
    expect(runs.find((r: Run) => r.event === "ticket_reopened")).toMatchObject({ decision: "applied", changes: { priority: "high" } });
    expect((await admin.get(`/tickets/${id}`)).body).toMatchObject({
      priority: "high",
      type: "problem",
      state: "in_progress",
      escalated: true,
    });
  });

  it("the runs endpoint is declared in OpenAPI, needs a role, and answers 404 for an absent ticket", async () => {
    const spec = await admin.get("/openapi.json");
    expect(spec.body.paths["/tickets/{record_id}/agent-runs"]?.get?.operationId).toBe("tickets-agent-runs");
    expect((await admin.get("/tickets/00000000-0000-4000-8000-000000000000/agent-runs")).status).toBe(404);
    expect((await client(app.url).get("/tickets/00000000-0000-4000-8000-000000000000/agent-runs")).status).toBe(401);
  });

  it.runIf(backend === "postgres")("stores the dispatcher's bookkeeping in the events table", async () => {
    // The last test's events are dispatched after its requests answered: wait for the worker to
    // drain them (a loaded machine takes a moment), then every event is dispatched on its first try.
    const bookkeeping = () =>
      psql(db, "SELECT count(*) FILTER (WHERE dispatched_at IS NULL), count(*), max(attempts) FROM events;", ["-tA"])
        .trim()
        .split("|")
        .map(Number);
    // Waits at most 15 s for none pending; the assertions below then report what is left, if any.
    const [pending, total, attempts] = await until(async () => {
      const row = bookkeeping();
      return row[0] === 0 ? row : undefined;
    }, 15_000).catch(bookkeeping);
    expect(total).toBeGreaterThan(5);
    expect(pending).toBe(0);
    expect(attempts).toBe(1);
    const runs = psql(db, "SELECT count(*) FROM agent_runs WHERE decision = 'running';", ["-tA"]);
    expect(runs.trim()).toBe("0");
  });
});

describe("agents without a provider", () => {
  it("are disabled with one line at start-up; requests work and nothing is called", async () => {
    const outDir = mkdtempSync(join(tmpdir(), "charter-agents-off-"));
    const app = await startGeneratedBackend({ domainDir: "examples/helpdesk", outDir, backend: "memory", env: NO_PROVIDER_ENV });
    try {
      const anon = client(app.url);
      const login = await anon.post("/auth/login", { email: "admin@example.com", password: "admin-password" });
      const admin = client(app.url, login.body.access_token);
      const c = await admin.post("/customers", { name: "Off Co", email: "off@example.com", plan: "pro" });
      const t = await admin.post("/tickets", { title: "No agents here", customer_id: c.body.id });
      expect(t.status).toBe(201);
      expect((await admin.get(`/tickets/${t.body.id}/agent-runs`)).body).toEqual({ items: [] });
      const lines = app
        .logs()
        .split("\n")
        .filter((l) => l.includes("agents disabled"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("triage_agent");
      expect(lines[0]).toContain("no LLM provider is configured");
    } finally {
      await app.stop();
      rmSync(outDir, { recursive: true, force: true });
    }
  });
});
