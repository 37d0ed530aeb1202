import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { Healer, type Ticket } from "../../src/healer/index.js";
import { buildHealerServer } from "../../src/healer/server/app.js";
import { type FakeLlm, useFakeLlm } from "../support/fake-llm.js";
import { BASE_DOMAIN, brokenShop, listFiles, makeProject, NO_PROVIDER_ENV } from "./helpers.js";

const noRegen = () => ({ files: 0, written: 0 });

const llm = useFakeLlm();
let fake: FakeLlm;
beforeEach(() => {
  fake = llm();
});

interface Running {
  url: string;
  healer: Healer;
  app: FastifyInstance;
  root: string;
}
const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.app.close();
    await r.healer.close();
  }
});

/** A Healer over `domainDir` served on 127.0.0.1 (a free port), with the fake LLM as provider. */
async function serve(
  domainDir: string,
  options: { env?: Record<string, string>; token?: string; realRegen?: boolean; bodyLimit?: number } = {},
): Promise<Running> {
  const root = makeProject(domainDir);
  const healer = new Healer({
    projectRoot: root,
    console: null,
    env: { ...fake.env(), ...options.env },
    ...(options.realRegen ? {} : { regenerate: noRegen }),
  });
  const app = buildHealerServer({ healer, token: options.token, ...(options.bodyLimit ? { bodyLimit: options.bodyLimit } : {}) });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const r = { url: `http://127.0.0.1:${port}`, healer, app, root };
  running.push(r);
  return r;
}

async function post(url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: "POST",
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

async function get(url: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url);
  return { status: res.status, json: await res.json() };
}

const MISSING_FIELD = brokenShop("missing_type");
const CUSTOMER = "domains/shop/entities/customer.contract.yaml";
const MISSING_TYPE_ERROR = () => {
  const f = checkDomain(MISSING_FIELD).findings.find((x) => x.severity === "error");
  if (!f) throw new Error("the fixture lost its error");
  return f.message;
};

/** Posts the missing_field fixture's finding as a validation report. */
function reportMissingType(url: string): Promise<{ status: number; json: unknown }> {
  return post(`${url}/healer/ingest`, { source: "validation", contract_fqn: "entity/shop/customer", error: MISSING_TYPE_ERROR() });
}

async function ticketOf(url: string, ingest: { json: unknown }): Promise<Ticket> {
  return (await get(`${url}/healer/tickets/${(ingest.json as { ticket_id: string }).ticket_id}`)).json as Ticket;
}

function customerSource(root: string): string {
  return readFileSync(join(root, CUSTOMER), "utf8");
}
const withType = (src: string) => src.replace("    email:\n      required: true", "    email:\n      type: email\n      required: true");

describe("the Healer service over HTTP", () => {
  it("health and status", async () => {
    const { url } = await serve(BASE_DOMAIN);
    expect(await get(`${url}/healer/health`)).toEqual({ status: 200, json: { status: "ok", service: "healer" } });
    const status = (await get(`${url}/healer/status`)).json as Record<string, unknown>;
    expect(Object.keys(status)).toEqual(expect.arrayContaining(["queue", "success_rate", "recurring", "recent"]));
    expect(status.success_rate).toEqual({ tier_1: 0, tier_2: 0, tier_3: 0 });
  });

  it("a tier 2 fix: ingest -> proposed -> approve -> applied, contract changed, code regenerated", async () => {
    const { url, root } = await serve(MISSING_FIELD, { realRegen: true });
    const before = customerSource(root);
    fake.reply({ json: { contract: withType(before), explanation: "email addresses are of type email" } });
    const ingest = await reportMissingType(url);
    expect(ingest.status).toBe(200);
    expect(ingest.json).toMatchObject({ status: "proposed", created: true });
    const id = (ingest.json as { ticket_id: string }).ticket_id;

    const t = (await get(`${url}/healer/tickets/${id}`)).json as Ticket;
    expect(t).toMatchObject({ status: "proposed", tier: 2, error_type: "missing_field" });
    expect(t.proposal).toMatchObject({
      method: "llm_structural",
      confidence: 0.7,
      attempts: 1,
      changes: [{ op: "add", path: "/spec/fields/email/type", value: "email" }],
      verification: { validates: true, generates: true },
    });
    expect(customerSource(root)).toBe(before);
    // The prompt carries the error and the contract, and asks for JSON in the content.
    expect(fake.userPrompt(0)).toContain(MISSING_TYPE_ERROR());
    expect(fake.userPrompt(0)).toContain("name: customer");
    expect(fake.requests[0]?.body.response_format).toEqual({ type: "json_object" });

    const approve = await post(`${url}/healer/approve/${id}`);
    expect(approve).toEqual({
      status: 200,
      json: expect.objectContaining({ ticket_id: id, status: "approved", outcome: "applied" }),
    });
    expect(customerSource(root)).toBe(withType(before));
    expect(checkDomain(join(root, "domains")).errors).toBe(0);
    expect(listFiles(join(root, "runtime", "backend"))).toContain("app/main.py");
    expect(((await get(`${url}/healer/tickets/${id}`)).json as Ticket).status).toBe("applied");
    // Approving again is a 400: only a proposed ticket can be approved.
    expect((await post(`${url}/healer/approve/${id}`)).status).toBe(400);
    expect((await post(`${url}/healer/reject/${id}`, { reason: "late" })).status).toBe(400);
  });

  it("properties outside the whitelists are stripped silently, then the proposal is valid", async () => {
    const { url } = await serve(MISSING_FIELD);
    const before = customerSource(running[0]?.root as string);
    const noisy = before
      .replace(
        "    email:\n      required: true",
        "    email:\n      type: email\n      required: true\n      required_when: is_active\n      unique: true",
      )
      .replace(
        "      required: true # shown in pickers",
        "      required: true # shown in pickers\n      constraints:\n        maxLength: 200\n        trim: true",
      );
    fake.reply({ json: { contract: noisy, explanation: "typed, and more" } });
    const r = await reportMissingType(url);
    expect(r.json).toMatchObject({ status: "proposed" });
    const t = await ticketOf(url, r);
    expect(t.proposal?.after).not.toMatch(/required_when|unique|trim/);
    expect(t.proposal?.after).toContain("maxLength: 200");
    expect(t.proposal?.after).toContain("# shown in pickers");
    expect(t.proposal?.changes.map((c) => c.path).sort()).toEqual(["/spec/fields/email/type", "/spec/fields/name/constraints"]);
    expect(fake.requests).toHaveLength(1);
  });

  it("an invalid first reply, then a good second: two calls, the second prompt simpler", async () => {
    const { url, root } = await serve(MISSING_FIELD);
    const before = customerSource(root);
    fake.reply(
      {
        json: {
          contract: before.replace("    email:\n      required: true", "    email:\n      type: mail\n      required: true"),
          explanation: "x",
        },
      },
      { json: { contract: withType(before), explanation: "type email" } },
    );
    const r = await reportMissingType(url);
    expect(r.json).toMatchObject({ status: "proposed" });
    expect(fake.requests).toHaveLength(2);
    const first = fake.userPrompt(0);
    const second = fake.userPrompt(1);
    expect(second.length).toBeLessThan(first.length);
    expect(second).toContain("A previous answer was refused");
    expect(second).toMatch(/is not one of/);
    expect(first).toContain("## The contract");
    expect(second).not.toContain("## The contract");
    const t = await ticketOf(url, r);
    expect(t.proposal?.attempts).toBe(2);
  });

  it("garbage twice ends failed with the reasons of both attempts", async () => {
    const { url } = await serve(MISSING_FIELD);
    fake.reply({ content: "Sure! Here is your fix." }, { content: "{not json" });
    const r = await reportMissingType(url);
    expect(r.json).toMatchObject({ status: "failed" });
    const t = await ticketOf(url, r);
    expect(t.resolution_note).toMatch(/attempt 1: unparsable: .*attempt 2: unparsable: /);
    expect(fake.requests).toHaveLength(2);
  });

  it("/metrics counts reports taken in, tickets by status and the model's calls with their latency", async () => {
    // Without a provider a repeat adds to the failed ticket; with the fake one, calls are made.
    const { url } = await serve(MISSING_FIELD, { env: NO_PROVIDER_ENV });
    const withModel = (await serve(MISSING_FIELD)).url;
    const scrape = async (): Promise<Map<string, number>> => {
      const res = await fetch(`${url}/metrics`);
      expect(res.headers.get("content-type")).toContain("text/plain");
      const out = new Map<string, number>();
      for (const line of (await res.text()).split("\n")) {
        if (!line || line.startsWith("#")) continue;
        const at = line.lastIndexOf(" ");
        out.set(line.slice(0, at), Number(line.slice(at + 1)));
      }
      return out;
    };
    const before = await scrape();
    expect((await reportMissingType(url)).json).toMatchObject({ status: "failed", created: true });
    expect((await reportMissingType(url)).json).toMatchObject({ created: false });
    fake.reply({ content: "Sure! Here is your fix." }, { content: "{not json" });
    expect((await reportMissingType(withModel)).json).toMatchObject({ status: "failed" });
    const after = await scrape();
    const delta = (key: string): number => (after.get(key) ?? 0) - (before.get(key) ?? 0);
    expect(after.get('healer_reports_ingested_total{result="created"}')).toBe(1);
    expect(after.get('healer_reports_ingested_total{result="repeat"}')).toBe(1);
    expect(after.get('healer_tickets{status="failed"}')).toBe(1);
    expect(after.get('healer_tickets{status="queued"}')).toBe(0);
    expect(after.get("healer_queue_depth")).toBe(0);
    // Model calls are counted for the whole process: two unparsable replies more than before.
    expect(delta('healer_model_calls_total{outcome="unparsable"}')).toBe(2);
    expect(delta('healer_model_call_duration_seconds_count{outcome="unparsable"}')).toBe(2);
  });

  it("a reply that changes nothing counts as a failed attempt", async () => {
    const { url, root } = await serve(MISSING_FIELD);
    fake.reply(
      { json: { contract: customerSource(root), explanation: "looks fine" } },
      { json: { contract: customerSource(root), explanation: "still" } },
    );
    const r = await reportMissingType(url);
    expect(r.json).toMatchObject({ status: "failed" });
    const t = await ticketOf(url, r);
    expect(t.resolution_note).toContain("changes nothing");
  });

  it("a hanging provider times out to failed while the service keeps answering", async () => {
    const { url } = await serve(MISSING_FIELD, { env: { SVC_AI_TIMEOUT: "1" } });
    fake.reply({ hang: true }, { hang: true });
    const started = Date.now();
    const ingest = post(`${url}/healer/ingest`, {
      source: "validation",
      contract_fqn: "entity/shop/customer",
      error: MISSING_TYPE_ERROR(),
    });
    await new Promise((r) => setTimeout(r, 200));
    // While the proposer waits, other requests are served at once.
    const t0 = Date.now();
    expect((await get(`${url}/healer/health`)).status).toBe(200);
    expect((await get(`${url}/healer/tickets`)).status).toBe(200);
    const other = await post(`${url}/healer/ingest`, { source: "runtime", error: "connection refused to db:5432" });
    expect(other.json).toMatchObject({ status: "failed" });
    expect(Date.now() - t0).toBeLessThan(900);
    const r = await ingest;
    expect(r.json).toMatchObject({ status: "failed" });
    expect(Date.now() - started).toBeLessThan(10_000);
    const t = await ticketOf(url, r);
    expect(t.resolution_note).toMatch(/attempt 1: timeout: no reply within 1 s; attempt 2: timeout/);
  });

  it("no provider: a tier 2/3 ingest answers failed with the hint", async () => {
    const { url } = await serve(BASE_DOMAIN, { env: { OPENAI_BASE_URL: "" } });
    const r = await post(`${url}/healer/ingest`, {
      source: "runtime",
      contract_fqn: "entity/shop/customer",
      error: "KeyError: 'email'",
      context: { status_code: 500, path: "/customers", method: "GET" },
    });
    expect(r.json).toMatchObject({ status: "failed" });
    const t = await ticketOf(url, r);
    expect(t).toMatchObject({ tier: 3, priority: "critical", error_type: "runtime_500" });
    expect(t.resolution_note).toMatch(/no LLM provider is configured: set one of ANTHROPIC_API_KEY/);
  });

  it("repeats of a report that failed for want of a provider, or that no contract can fix, add to that ticket", async () => {
    const { url } = await serve(BASE_DOMAIN, { env: { OPENAI_BASE_URL: "" } });
    const report = { source: "runtime", contract_fqn: "entity/shop/customer", error: "KeyError: 'email'", context: { status_code: 500 } };
    const data = { source: "runtime", contract_fqn: "entity/shop/customer", error: "connection refused to db:5432" };
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await post(`${url}/healer/ingest`, report), await post(`${url}/healer/ingest`, data));
    const tickets = (await get(`${url}/healer/tickets`)).json as Ticket[];
    expect(tickets.map((t) => [t.status, t.occurrences, t.fixable_by]).sort()).toEqual([
      ["failed", 5, "contract"],
      ["failed", 5, "data"],
    ]);
    expect(results.filter((r) => (r.json as { created: boolean }).created)).toHaveLength(2);
  });

  it("once a provider is configured, a repeat of a no-provider failure asks it, on the same ticket", async () => {
    const { url, root, healer, app } = await serve(BASE_DOMAIN, { env: { OPENAI_BASE_URL: "" } });
    const report = { source: "runtime", error: "KeyError: 'email'", context: { status_code: 500, path: "/customers" } };
    const first = (await post(`${url}/healer/ingest`, report)).json as { ticket_id: string; status: string };
    expect(first).toMatchObject({ status: "failed" });
    await app.close();
    await healer.close();
    running.length = 0;
    const withProvider = new Healer({ projectRoot: root, console: null, env: fake.env(), regenerate: noRegen });
    const again = buildHealerServer({ healer: withProvider });
    await again.listen({ host: "127.0.0.1", port: 0 });
    const address = again.server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    running.push({ url: `http://127.0.0.1:${port}`, healer: withProvider, app: again, root });
    fake.reply({
      json: { contract: customerSource(root).replace("A customer of the shop", "A customer of the shop, with an email"), explanation: "e" },
    });
    const repeat = (await post(`http://127.0.0.1:${port}/healer/ingest`, report)).json;
    expect(repeat).toMatchObject({ ticket_id: first.ticket_id, created: false, status: "proposed", occurrences: 2 });
    expect(fake.requests).toHaveLength(1);
  });

  it("a tier 1 report is applied synchronously", async () => {
    const broken = brokenShop("graph_edge");
    const { url, root } = await serve(broken);
    const f = checkDomain(join(root, "domains")).findings.find((x) => x.severity === "error");
    const r = await post(`${url}/healer/ingest`, { source: "validation", contract_fqn: f?.fqn, error: f?.message });
    expect(r.json).toMatchObject({ status: "applied" });
    expect(checkDomain(join(root, "domains")).errors).toBe(0);
    expect(fake.requests).toHaveLength(0);
  });

  it("404 for unknown ids, 400 for approve and reject when not proposed", async () => {
    const { url } = await serve(BASE_DOMAIN, { env: { OPENAI_BASE_URL: "" } });
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect((await get(`${url}/healer/tickets/${unknown}`)).status).toBe(404);
    expect((await fetch(`${url}/healer/tickets/${unknown}/view`)).status).toBe(404);
    expect((await get(`${url}/healer/tickets/not-an-id`)).status).toBe(404);
    expect((await post(`${url}/healer/approve/${unknown}`)).status).toBe(404);
    expect((await post(`${url}/healer/reject/${unknown}`, { reason: "x" })).status).toBe(404);
    const r = await post(`${url}/healer/ingest`, { source: "manual", contract_fqn: "entity/shop/customer", error: "connection refused" });
    const id = (r.json as { ticket_id: string }).ticket_id;
    const approve = await post(`${url}/healer/approve/${id}`);
    expect(approve.status).toBe(400);
    expect(approve.json).toMatchObject({ error: "invalid_state", message: expect.stringContaining("is failed") });
    expect((await post(`${url}/healer/reject/${id}`)).status).toBe(400);
    expect((await get(`${url}/healer/nowhere`)).status).toBe(404);
  });

  it("filters on status, priority and exact contract_fqn; bad filter values are 400", async () => {
    const { url } = await serve(BASE_DOMAIN, { env: { OPENAI_BASE_URL: "" } });
    // A runtime report's contract is the one its request path maps to.
    await post(`${url}/healer/ingest`, { source: "runtime", error: "boom", context: { status_code: 500, path: "/customers" } });
    await post(`${url}/healer/ingest`, { source: "runtime", error: "boom 2", context: { status_code: 409, path: "/orders/1" } });
    await post(`${url}/healer/ingest`, {
      source: "runtime",
      contract_fqn: "entity/shop/order_item",
      error: "duplicate key value violates unique constraint",
    });
    const list = async (q: string) => ((await get(`${url}/healer/tickets${q}`)).json as Ticket[]).map((t) => t.contract_fqn);
    expect(await list("")).toHaveLength(3);
    expect(await list("?priority=critical")).toEqual(["entity/shop/customer"]);
    expect((await list("?priority=high")).sort()).toEqual(["entity/shop/order", null]);
    expect(await list("?contract_fqn=entity/shop/order")).toEqual(["entity/shop/order"]);
    expect(await list("?contract_fqn=entity/shop")).toEqual([]);
    expect(await list("?status=failed&priority=critical")).toEqual(["entity/shop/customer"]);
    expect(await list("?status=proposed")).toEqual([]);
    expect((await get(`${url}/healer/tickets?status=done`)).status).toBe(400);
    expect((await get(`${url}/healer/tickets?priority=urgent`)).status).toBe(400);
  });

  it("malformed JSON, bad bodies, unsafe FQNs and oversized bodies are 4xx with a reason, never 500", async () => {
    const { url } = await serve(BASE_DOMAIN, { env: { OPENAI_BASE_URL: "" }, bodyLimit: 64 * 1024 });
    const bad = async (body: unknown, status = 400) => {
      const r = await post(`${url}/healer/ingest`, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      return (r.json as { message: string }).message;
    };
    expect(await bad('{"source": "runtime", ')).toMatch(/not valid JSON/);
    expect(await bad("[1, 2]")).toMatch(/body must be object/);
    expect(await bad({ error: "x" })).toMatch(/source/);
    expect(await bad({ source: "cosmic", error: "x" })).toMatch(/source must be equal to one of the allowed values/);
    expect(await bad({ source: "runtime", error: "" })).toMatch(/error must NOT have fewer than 1 characters/);
    expect(await bad({ source: "runtime", error: "x", context: "nope" })).toMatch(/context must be object/);
    expect(await bad({ source: "runtime", error: "x", context: { status_code: "x500" } })).toMatch(/status_code/);
    for (const fqn of [
      "../../etc/passwd",
      "entity/shop/../../x",
      "/entity/shop/x",
      "entity/shop/x/y",
      "entity/shop/x\u0000",
      "entity\\shop\\x",
    ]) {
      expect(await bad({ source: "validation", error: "x", contract_fqn: fqn })).toMatch(/contract_fqn .* is refused|NUL character/);
    }
    // A name that breaks the naming rule is not a path: it passes the FQN check, and is then
    // refused only because the contract does not fail validation with that made-up text.
    const named = await post(`${url}/healer/ingest`, { source: "validation", contract_fqn: "entity/shop/OrderItem", error: "x" });
    expect(named.status).toBe(400);
    expect(JSON.stringify(named.json)).toMatch(/does not fail validation with this error/);
    const big = { source: "runtime", error: "x".repeat(70 * 1024) };
    const r = await post(`${url}/healer/ingest`, big);
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ error: "payload_too_large" });
    const plain = await fetch(`${url}/healer/ingest`, { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" });
    expect(plain.status).toBe(415);
    expect(((await plain.json()) as { message: string }).message).toMatch(/text\/plain is not accepted/);
    // Every report above was refused: none became a ticket.
    expect((await get(`${url}/healer/tickets`)).json).toHaveLength(0);
  });

  it("with SVC_HEALER_TOKEN every POST and every ticket read needs the bearer token", async () => {
    const { url, root } = await serve(MISSING_FIELD, { token: "s3cret" });
    const body = { source: "validation", contract_fqn: "entity/shop/customer", error: MISSING_TYPE_ERROR() };
    expect((await post(`${url}/healer/ingest`, body)).status).toBe(401);
    expect((await post(`${url}/healer/ingest`, body, { authorization: "Bearer wrong" })).status).toBe(401);
    fake.reply({ json: { contract: withType(customerSource(root)), explanation: "typed" } });
    const ok = await post(`${url}/healer/ingest`, body, { authorization: "Bearer s3cret" });
    expect(ok.json).toMatchObject({ status: "proposed" });
    const id = (ok.json as { ticket_id: string }).ticket_id;
    expect((await post(`${url}/healer/reject/${id}`, { reason: "no" })).status).toBe(401);
    expect((await fetch(`${url}/healer/tickets/${id}`)).status).toBe(401);
    expect((await fetch(`${url}/healer/tickets/${id}`, { headers: { authorization: "Bearer s3cret" } })).status).toBe(200);
    expect((await fetch(`${url}/healer/status`)).status).toBe(200);
    // The view page sends a browser without a session to the login form.
    const page = await fetch(`${url}/healer/tickets/${id}/view`, { redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe(`/healer/login?next=${encodeURIComponent(`/healer/tickets/${id}/view`)}`);
    const form = await fetch(`${url}/healer/reject/${id}/action`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "reason=nope",
      redirect: "manual",
    });
    expect(form.status).toBe(401);
    // The token as a form field is no longer a way in (sessions and CSRF: security.test.ts).
    const tokenField = await fetch(`${url}/healer/reject/${id}/action`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "reason=nope&token=s3cret",
      redirect: "manual",
    });
    expect(tokenField.status).toBe(401);
    const withToken = await fetch(`${url}/healer/reject/${id}/action`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Bearer s3cret" },
      body: "reason=nope",
      redirect: "manual",
    });
    expect(withToken.status).toBe(303);
    const after = await fetch(`${url}/healer/tickets/${id}`, { headers: { authorization: "Bearer s3cret" } });
    expect(((await after.json()) as Ticket).status).toBe("rejected");
  });

  it("without a token, approve and reject are refused from other machines, ingest is not", async () => {
    const { app, url } = await serve(BASE_DOMAIN, { env: { OPENAI_BASE_URL: "" } });
    const id = "00000000-0000-4000-8000-000000000000";
    const remote = { remoteAddress: "10.1.2.3" };
    expect((await app.inject({ method: "POST", url: `/healer/approve/${id}`, ...remote })).statusCode).toBe(403);
    expect((await app.inject({ method: "POST", url: `/healer/reject/${id}/action`, ...remote })).statusCode).toBe(403);
    expect((await post(`${url}/healer/approve/${id}`)).status).toBe(404);
    // The app reaches it by address; a page whose name was rebound to this machine is refused.
    const report = { method: "POST" as const, url: "/healer/ingest", payload: { source: "manual", error: "timeout" }, ...remote };
    expect((await app.inject({ ...report, headers: { host: "10.0.0.9:8083" } })).statusCode).toBe(200);
    expect((await app.inject({ ...report, headers: { host: "evil.example:8083" } })).statusCode).toBe(403);
    // A cross-site form post from a page elsewhere is refused even from this machine.
    const csrf = await app.inject({
      method: "POST",
      url: `/healer/approve/${id}/action`,
      remoteAddress: "127.0.0.1",
      headers: { origin: "http://evil.example", host: "localhost:8083" },
    });
    expect(csrf.statusCode).toBe(403);
  });

  it("100 concurrent ingests: none lost, dedup holds", async () => {
    const { url, root } = await serve(BASE_DOMAIN);
    const customer = customerSource(root);
    const proposal = {
      contract: customer.replace("description: A customer of the shop", "description: A customer of the shop (email required)"),
      explanation: "describe",
    };
    for (let i = 0; i < 10; i++) fake.reply({ json: proposal });
    const reports = Array.from({ length: 100 }, (_, i) => ({
      source: "runtime",
      contract_fqn: "entity/shop/customer",
      error: `KeyError: 'field_${i % 10}'`,
      context: { status_code: 500, path: "/customers", method: "POST" },
    }));
    const results = await Promise.all(reports.map((r) => post(`${url}/healer/ingest`, r)));
    expect(results.filter((r) => r.status !== 200)).toEqual([]);
    const tickets = (await get(`${url}/healer/tickets`)).json as Ticket[];
    expect(tickets).toHaveLength(10);
    expect(tickets.reduce((n, t) => n + t.occurrences, 0)).toBe(100);
    expect(new Set(results.map((r) => (r.json as { ticket_id: string }).ticket_id)).size).toBe(10);
    expect(results.filter((r) => (r.json as { created: boolean }).created)).toHaveLength(10);
    expect(tickets.every((t) => t.status === "proposed")).toBe(true);
    expect(fake.requests).toHaveLength(10);
    expect(existsSync(join(root, ".forge/healer/healer.db"))).toBe(true);
  });
});
