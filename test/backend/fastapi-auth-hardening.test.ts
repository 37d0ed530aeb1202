import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { client, signJwt } from "./http.js";

/**
 * Login throttling and token checks of the generated helpdesk app, started for real with small
 * limits (3 failures per account, 8 per address). The tests share the counters, so they run in order.
 */
describe("generated FastAPI backend: login throttling and token checks", () => {
  let app: RunningBackend;
  let outDir: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "charter-auth-hardening-"));
    app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir,
      backend: "memory",
      env: {
        AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT: "3",
        AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS: "8",
        AUTH_LOGIN_WINDOW_SECONDS: "600",
      },
    });
  });

  afterAll(async () => {
    await app?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  const login = (email: string, password: string) => client(app.url).post("/auth/login", { email, password });

  it("issues tokens that carry iat and an exp AUTH_TOKEN_EXPIRE_MINUTES later", async () => {
    const r = await client(app.url).post("/auth/login", { email: "victor@example.com", password: "viewer-password" });
    expect(r.status).toBe(200);
    const claims = JSON.parse(Buffer.from(String(r.body.access_token).split(".")[1] ?? "", "base64url").toString());
    expect(claims.exp - claims.iat).toBe(60 * 60);
    expect(r.body.expires_in).toBe(3600);
  });

  it("refuses tokens without exp or iat, expired ones, alg none and tampered signatures with 401", async () => {
    const now = Math.floor(Date.now() / 1000);
    const base = { sub: "admin", email: "admin@example.com", role: "admin", iss: "helpdesk" };
    const good = signJwt({ ...base, iat: now, exp: now + 600 }, TEST_AUTH_SECRET);
    expect((await client(app.url, good).get("/tickets")).status).toBe(200);
    const [head, payload, signature] = good.split(".");
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
    const flipped = `${head}.${payload}.${(signature ?? "").slice(0, -2)}${(signature ?? "").endsWith("AA") ? "BB" : "AA"}`;
    const tokens = {
      noExp: signJwt({ ...base, iat: now }, TEST_AUTH_SECRET),
      noIat: signJwt({ ...base, exp: now + 600 }, TEST_AUTH_SECRET),
      expired: signJwt({ ...base, iat: now - 120, exp: now - 60 }, TEST_AUTH_SECRET),
      none,
      flipped,
    };
    for (const [name, token] of Object.entries(tokens)) {
      const r = await client(app.url, token).get("/tickets");
      expect(r.status, name).toBe(401);
      expect(r.body, name).toMatchObject({ error: "unauthorized" });
    }
  });

  it("counts only failures, and a successful login clears its account's", async () => {
    expect((await login("victor@example.com", "wrong")).status).toBe(401);
    expect((await login("victor@example.com", "wrong")).status).toBe(401);
    expect((await login("victor@example.com", "viewer-password")).status).toBe(200);
    // Two more failures: still under 3, since the success started the account's count again.
    expect((await login("victor@example.com", "wrong")).status).toBe(401);
    expect((await login("victor@example.com", "wrong")).status).toBe(401);
    expect((await login("victor@example.com", "viewer-password")).status).toBe(200);
  });

  it("answers 429 with Retry-After once an account reached its limit, even to the right password", async () => {
    for (let i = 0; i < 3; i++) expect((await login("admin@example.com", `guess-${i}`)).status).toBe(401);
    const r = await login("admin@example.com", "admin-password");
    expect(r.status).toBe(429);
    expect(r.body).toMatchObject({ error: "too_many_requests" });
    const retryAfter = Number(r.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // The account is the email, whatever its case.
    expect((await login("ADMIN@Example.com", "admin-password")).status).toBe(429);
    // Other accounts are not throttled by it.
    expect((await login("alice@example.com", "agent-password")).status).toBe(200);
  });

  it("throttles a client address across accounts", async () => {
    // 7 failures from 127.0.0.1 so far (4 for victor, 3 for admin); the 8th reaches the limit.
    expect((await login("nobody@example.com", "x")).status).toBe(401);
    const r = await login("alice@example.com", "agent-password");
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
