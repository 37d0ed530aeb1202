import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { client, signJwt } from "./http.js";

/**
 * POST /auth/refresh re-checks the user store: a token of a user who was deleted, whose role
 * changed or whose password changed since signing in gets no new token. The
 * users are changed in PostgreSQL behind the app's back, as an operator would.
 */
describe("refresh re-validates the user", () => {
  let outDir: string;
  let db: string;
  let app: RunningBackend;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "charter-refresh-"));
    db = freshDatabase("charter_backend_refresh");
    app = await startGeneratedBackend({ domainDir: "examples/helpdesk", outDir, backend: "postgres", databaseUrl: databaseUrl(db) });
  });

  afterAll(async () => {
    await app?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  async function login(email: string, password: string): Promise<string> {
    const r = await client(app.url).post("/auth/login", { email, password });
    expect(r.status).toBe(200);
    return r.body.access_token as string;
  }
  const refresh = async (token: string): Promise<number> => (await client(app.url, token).post("/auth/refresh")).status;

  it("refreshes a token of an unchanged user, and the new token refreshes too", async () => {
    const token = await login("victor@example.com", "viewer-password");
    const r = await client(app.url, token).post("/auth/refresh");
    expect(r.status).toBe(200);
    expect(await refresh(r.body.access_token)).toBe(200);
  });

  it("refuses after a demotion (or any role change), though the old token still verifies", async () => {
    const token = await login("alice@example.com", "agent-password");
    psql(db, "UPDATE auth_users SET role = 'viewer' WHERE id = 'alice'");
    expect(await refresh(token)).toBe(401);
    psql(db, "UPDATE auth_users SET role = 'agent' WHERE id = 'alice'");
    expect(await refresh(token)).toBe(200);
  });

  it("refuses after a password change", async () => {
    const token = await login("alice@example.com", "agent-password");
    psql(db, "UPDATE auth_users SET password_hash = (SELECT password_hash FROM auth_users WHERE id = 'victor') WHERE id = 'alice'");
    expect(await refresh(token)).toBe(401);
    expect((await client(app.url).post("/auth/login", { email: "alice@example.com", password: "viewer-password" })).status).toBe(200);
  });

  it("refuses after a deletion", async () => {
    const token = await login("admin@example.com", "admin-password");
    psql(db, "DELETE FROM auth_users WHERE id = 'admin'");
    const r = await client(app.url, token).post("/auth/refresh");
    expect(r.status).toBe(401);
    expect(JSON.stringify(r.body)).toContain("removed");
  });

  it("refuses a token without the password stamp, signed with the real secret (older tokens)", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = signJwt(
      { sub: "victor", email: "victor@example.com", role: "viewer", iat: now, exp: now + 600, iss: "helpdesk" },
      TEST_AUTH_SECRET,
    );
    expect((await client(app.url, token).get("/auth/me")).status).toBe(200);
    expect(await refresh(token)).toBe(401);
  });
});
