import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { type Client, client, eventually, startFakeHealer } from "./http.js";

/**
 * An unhandled exception without a test-only hook in the app: the fixture's route rule compares a
 * string field with a number (a contract mistake the validator does not catch), so Python raises
 * TypeError while the rule runs, on the memory backend as on PostgreSQL.
 */
describe.each(["memory", "postgres"] as const)("unhandled exception from a mistyped contract rule on %s", (backend) => {
  let outDir: string;
  let app: RunningBackend;
  let api: Client;
  let healer: Awaited<ReturnType<typeof startFakeHealer>>;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), `charter-runtime-error-${backend}-`));
    healer = await startFakeHealer();
    const db = backend === "postgres" ? freshDatabase("charter_backend_runtime_error") : "";
    app = await startGeneratedBackend({
      domainDir: "test/fixtures/backend/mistyped_rule",
      outDir,
      backend,
      ...(db ? { databaseUrl: databaseUrl(db) } : {}),
      env: { SVC_HEALER_URL: healer.url },
    });
    api = client(app.url);
  });

  afterAll(async () => {
    await app?.stop();
    await healer?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it("passes the rule when the field is unset", async () => {
    const r = await api.post("/orders", { title: "Fine" });
    expect(r.status).toBe(201);
  });

  it("answers 500 internal_error without a stack trace and reports the exception to the Healer", async () => {
    const r = await api.post("/orders", { title: "Boom", code: "A-1" });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: "internal_error", message: "an internal error occurred", request_id: r.headers.get("x-request-id") });
    const report = await eventually(() => healer.received[0]);
    expect(report).toMatchObject({
      path: "/healer/ingest",
      source: "runtime",
      context: { path: "/orders", request_path: "/orders", method: "POST", status_code: 500 },
    });
    // The app names the request, not a contract: the Healer's intake decides which contract the
    // failure is about, from the path (test/healer/loop-e2e.test.ts shows it on a real Healer).
    expect(report).not.toHaveProperty("contract_fqn");
    expect(report.context).not.toHaveProperty("route_fqn");
    expect(String(report.error)).toContain("TypeError");
    expect(String(report.stacktrace)).toContain("app/rules.py");
    // Nothing was written, and the app keeps serving.
    expect((await api.get("/orders")).body.total).toBe(1);
    expect((await api.get("/health")).status).toBe(200);
  });

  it("says it closes the connection after a 500, so a keep-alive client never writes into it", async () => {
    // uvicorn closes the connection once Starlette raises the exception again after the 500.
    // Announced in the answer, the client opens a new connection for the next request.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const { port } = new URL(app.url);
    const post = () =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const body = JSON.stringify({ title: "Boom", code: "A-1" });
        const req = http.request(
          {
            host: "127.0.0.1",
            port,
            path: "/orders",
            method: "POST",
            agent,
            headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    try {
      for (let i = 0; i < 30; i++) expect(await post()).toEqual({ status: 500, connection: "close" });
    } finally {
      agent.destroy();
    }
  });
});
