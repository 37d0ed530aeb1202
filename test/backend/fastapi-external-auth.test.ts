import { createHmac, createPublicKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend, type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { client } from "./http.js";

/**
 * AUTH_PROVIDER=external end to end: the generated helpdesk backend checks RS256 and ES256 tokens
 * signed here against a JWK set served on 127.0.0.1, as an identity provider would publish it.
 */

const ISSUER = "https://idp.example.test/";
const AUDIENCE = "helpdesk-api";

type Alg = "RS256" | "ES256";

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString("base64url");
}

/** A compact JWS over `header` and `claims`; ES256 signatures in the JOSE (r || s) form. */
function signToken(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject, alg: Alg): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature =
    alg === "RS256" ? sign("sha256", Buffer.from(input), key) : sign("sha256", Buffer.from(input), { key, dsaEncoding: "ieee-p1363" });
  return `${input}.${b64url(signature)}`;
}

/** Serves a JWK set, plus `/broken` (HTML instead of JSON) and 404 elsewhere, as failing providers do. */
async function startJwks(keys: object[]): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let count = 0;
  const server: Server = createServer((req, res) => {
    count += 1;
    if (req.url === "/broken") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>maintenance</html>");
      return;
    }
    if (req.url !== "/.well-known/jwks.json") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    requests: () => count,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe("generated FastAPI backend with AUTH_PROVIDER=external", () => {
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
  // Not published: tokens signed with it must fail even under a published kid.
  const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 });
  /** The public JWK of a private key, as an identity provider publishes it. */
  const jwk = (key: KeyObject, kid: string, alg: Alg) => ({ ...createPublicKey(key).export({ format: "jwk" }), kid, alg, use: "sig" });

  let jwks: Awaited<ReturnType<typeof startJwks>>;
  let outDir: string;
  let strict: RunningBackend;
  let rolesClaim: RunningBackend;
  let broken: RunningBackend;

  const now = () => Math.floor(Date.now() / 1000);
  const claims = (extra: Record<string, unknown> = {}) => ({
    sub: "ext-admin",
    email: "admin@idp.example.test",
    role: "admin",
    iss: ISSUER,
    aud: AUDIENCE,
    iat: now(),
    exp: now() + 600,
    ...extra,
  });
  const rs256 = (extra: Record<string, unknown> = {}, kid = "rsa-1", key: KeyObject = rsa.privateKey) =>
    signToken({ alg: "RS256", typ: "JWT", kid }, claims(extra), key, "RS256");
  const es256 = (extra: Record<string, unknown> = {}) =>
    signToken({ alg: "ES256", typ: "JWT", kid: "ec-1" }, claims(extra), ec.privateKey, "ES256");

  beforeAll(async () => {
    jwks = await startJwks([jwk(rsa.privateKey, "rsa-1", "RS256"), jwk(ec.privateKey, "ec-1", "ES256")]);
    outDir = mkdtempSync(join(tmpdir(), "charter-backend-external-"));
    generateBackend("examples/helpdesk", outDir);
    const external = { AUTH_ENABLED: "true", AUTH_PROVIDER: "external", AUTH_JWKS_URL: jwks.url };
    [strict, rolesClaim, broken] = await Promise.all([
      startGeneratedBackend({
        domainDir: "examples/helpdesk",
        outDir,
        backend: "memory",
        skipGenerate: true,
        env: { ...external, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE },
      }),
      startGeneratedBackend({
        domainDir: "examples/helpdesk",
        outDir,
        backend: "memory",
        skipGenerate: true,
        env: { ...external, AUTH_ROLE_CLAIM: "roles" },
      }),
      startGeneratedBackend({
        domainDir: "examples/helpdesk",
        outDir,
        backend: "memory",
        skipGenerate: true,
        env: { ...external, AUTH_JWKS_URL: jwks.url.replace("/.well-known/jwks.json", "/broken") },
      }),
    ]);
  });

  afterAll(async () => {
    await strict?.stop();
    await rolesClaim?.stop();
    await broken?.stop();
    await jwks?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it("accepts an RS256 token of the published key and maps its claims to the user", async () => {
    const api = client(strict.url, rs256());
    const me = await api.get("/auth/me");
    expect(me).toMatchObject({ status: 200, body: { id: "ext-admin", email: "admin@idp.example.test", role: "admin" } });
    expect((await api.get("/tickets")).status).toBe(200);
    const created = await api.post("/customers", { name: "External", email: "ext@example.com" });
    expect(created.status).toBe(201);
    expect(created.body.created_by).toBe("ext-admin");
    expect(jwks.requests()).toBeGreaterThan(0);
  });

  it("accepts an ES256 token of the published EC key", async () => {
    const api = client(strict.url, es256({ sub: "ext-agent", role: "agent" }));
    expect((await api.get("/auth/me")).body).toMatchObject({ id: "ext-agent", role: "agent" });
    expect((await api.get("/customers")).status).toBe(200);
  });

  it("maps the role claim to 403 and 200 per endpoint", async () => {
    const viewer = client(strict.url, rs256({ sub: "ext-viewer", role: "viewer" }));
    expect((await viewer.get("/agents")).status).toBe(200);
    const refused = await viewer.get("/customers");
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("forbidden");
    const agent = client(strict.url, rs256({ sub: "ext-agent", role: "agent" }));
    expect((await agent.get("/customers")).status).toBe(200);
    expect((await agent.post("/agents", { name: "No", email: "no@example.com" })).status).toBe(403);
    const unknownRole = client(strict.url, rs256({ role: "superuser" }));
    expect((await unknownRole.get("/tickets")).status).toBe(403);
  });

  it("refuses wrong or missing issuer and audience, expired tokens and tokens without a role", async () => {
    const { iss: _iss, ...noIssuer } = claims();
    const { aud: _aud, ...noAudience } = claims();
    const { role: _role, ...noRole } = claims();
    const cases: Record<string, string> = {
      "wrong issuer": rs256({ iss: "https://evil.example.test/" }),
      "missing issuer": signToken({ alg: "RS256", kid: "rsa-1" }, noIssuer, rsa.privateKey, "RS256"),
      "wrong audience": rs256({ aud: "another-api" }),
      "missing audience": signToken({ alg: "RS256", kid: "rsa-1" }, noAudience, rsa.privateKey, "RS256"),
      expired: rs256({ iat: now() - 7200, exp: now() - 3600 }),
      "expired ES256": signToken({ alg: "ES256", kid: "ec-1" }, claims({ exp: now() - 60 }), ec.privateKey, "ES256"),
      "no role": signToken({ alg: "RS256", kid: "rsa-1" }, noRole, rsa.privateKey, "RS256"),
    };
    for (const [name, token] of Object.entries(cases)) {
      const r = await client(strict.url, token).get("/agents");
      expect(r.status, name).toBe(401);
      expect(r.body.error, name).toBe("unauthorized");
      expect(r.headers.get("www-authenticate"), name).toBe("Bearer");
    }
  });

  it("refuses tokens of keys that are not published", async () => {
    const cases: Record<string, string> = {
      "kid not in the set": rs256({}, "rsa-unknown"),
      "no kid": signToken({ alg: "RS256", typ: "JWT" }, claims(), rsa.privateKey, "RS256"),
      "other key under a published kid": rs256({}, "rsa-1", stranger.privateKey),
      "EC signature under the RSA kid": signToken({ alg: "ES256", kid: "rsa-1" }, claims(), ec.privateKey, "ES256"),
      "RSA signature under the EC kid": signToken({ alg: "RS256", kid: "ec-1" }, claims(), rsa.privateKey, "RS256"),
    };
    for (const [name, token] of Object.entries(cases)) {
      expect((await client(strict.url, token).get("/agents")).status, name).toBe(401);
    }
  });

  it("refuses alg none and HS256 tokens keyed with the public key (algorithm confusion)", async () => {
    const body = b64url(JSON.stringify(claims()));
    const none = `${b64url(JSON.stringify({ alg: "none", typ: "JWT", kid: "rsa-1" }))}.${body}.`;
    const hsInput = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT", kid: "rsa-1" }))}.${body}`;
    const pem = createPublicKey(rsa.privateKey).export({ type: "spki", format: "pem" });
    const jwkText = JSON.stringify(jwk(rsa.privateKey, "rsa-1", "RS256"));
    const confused = [pem, jwkText].map((secret) => `${hsInput}.${createHmac("sha256", secret).update(hsInput).digest("base64url")}`);
    for (const token of [none, ...confused]) {
      const r = await client(strict.url, token).get("/agents");
      expect(r.status, token.slice(0, 40)).toBe(401);
    }
  });

  it("has no password login or refresh: the identity provider issues the tokens", async () => {
    const login = await client(strict.url).post("/auth/login", { email: "admin@example.com", password: "admin-password" });
    expect(login.status).toBe(404);
    expect((await client(strict.url, rs256()).post("/auth/refresh")).status).toBe(401);
    expect((await client(strict.url).get("/tickets")).status).toBe(401);
  });

  it("reads the role from AUTH_ROLE_CLAIM (first entry of a list) and skips unset issuer and audience checks", async () => {
    const agent = client(rolesClaim.url, rs256({ roles: ["agent", "admin"], role: "viewer", iss: "anyone", aud: "anything" }));
    expect((await agent.get("/auth/me")).body).toMatchObject({ id: "ext-admin", role: "agent" });
    expect((await agent.get("/customers")).status).toBe(200);
    expect((await agent.post("/agents", { name: "No", email: "no@example.com" })).status).toBe(403);
    const viewer = client(rolesClaim.url, es256({ roles: "viewer" }));
    expect((await viewer.get("/customers")).status).toBe(403);
    expect((await viewer.get("/agents")).status).toBe(200);
    // `role` alone does not count when the claim is configured as `roles`.
    expect((await client(rolesClaim.url, rs256({ role: "admin" })).get("/agents")).status).toBe(401);
    expect((await client(rolesClaim.url, rs256({ roles: [] })).get("/agents")).status).toBe(401);
  });

  it("answers 401, not 500, when the identity provider serves no usable JWK set", async () => {
    for (const token of [rs256(), es256(), "not-a-jwt"]) {
      const r = await client(broken.url, token).get("/agents");
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("unauthorized");
    }
    expect(broken.logs()).not.toContain("Traceback");
  });
});
