import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";

/** The stand-in for the frontend's server: the one peer whose X-Forwarded-For the app believes. */
const PROXY = "127.0.0.9";

/** POST /auth/login from a chosen loopback address (Linux routes all of 127/8 to lo). */
function loginFrom(base: string, from: string, body: unknown, forwardedFor?: string): Promise<{ status: number; retryAfter?: string }> {
  return new Promise((done, fail) => {
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (forwardedFor) headers["X-Forwarded-For"] = forwardedFor;
    const req = httpRequest(`${base}/auth/login`, { method: "POST", localAddress: from, headers }, (res) => {
      res.resume();
      res.on("end", () => {
        const retryAfter = res.headers["retry-after"];
        done({ status: res.statusCode ?? 0, ...(typeof retryAfter === "string" ? { retryAfter } : {}) });
      });
    });
    req.on("error", fail);
    req.end(JSON.stringify(body));
  });
}

/** Who counts as the client of a login, and which account a failure counts against. */
describe("login throttle: client address from trusted proxies only, failures per account", () => {
  let outDir: string;
  let app: RunningBackend;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "charter-client-address-"));
    app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir,
      backend: "memory",
      env: { AUTH_ENABLED: "true", TRUSTED_PROXIES: PROXY },
    });
  });

  afterAll(async () => {
    await app?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it("throttles a direct caller by its own address however it rotates X-Forwarded-For", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      statuses.push((await loginFrom(app.url, "127.0.0.4", { email: `rot${i}@example.com`, password: "guess" }, `198.51.100.${i}`)).status);
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses[20]).toBe(429);
  });

  it("counts each client the trusted proxy names on its own: one locked out, another signs in", async () => {
    for (let i = 0; i < 20; i++) {
      expect((await loginFrom(app.url, PROXY, { email: `p${i}@example.com`, password: "guess" }, "203.0.113.7")).status).toBe(401);
    }
    const locked = await loginFrom(app.url, PROXY, { email: "p20@example.com", password: "guess" }, "203.0.113.7");
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThan(0);
    // The proxy's own address was never what was counted: another client of it signs in.
    const other = await loginFrom(app.url, PROXY, { email: "admin@example.com", password: "admin-password" }, "203.0.113.8");
    expect(other.status).toBe(200);
    // The last entry is the proxy's word; what the client wrote before it does not count.
    const prefixed = await loginFrom(app.url, PROXY, { email: "x@example.com", password: "guess" }, "192.0.2.1, 203.0.113.7");
    expect(prefixed.status).toBe(429);
  });

  it("keys the per-account counter by the account, whether email (any case) or id was typed", async () => {
    for (let i = 0; i < 5; i++) {
      expect(
        (await loginFrom(app.url, `127.0.1.${i + 1}`, { email: i % 2 ? "Victor@Example.com" : "victor@example.com", password: "guess" }))
          .status,
      ).toBe(401);
    }
    expect((await loginFrom(app.url, "127.0.1.9", { id: "victor", password: "viewer-password" })).status).toBe(429);
    expect((await loginFrom(app.url, "127.0.1.9", { email: "VICTOR@example.com", password: "viewer-password" })).status).toBe(429);
  });
});
