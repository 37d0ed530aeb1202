import { execFileSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { generateTarget } from "../../src/generators/registry.js";
import { writeFiles } from "../../src/generators/writer.js";
import { launchChromium } from "../support/chromium.js";
import { freePort } from "../support/net.js";

/**
 * The generated `all` target as a user runs it: `docker compose up --build` on a real engine
 * (scripts/docker-setup.sh: Debian's docker.io, Compose v2 and stand-in base images where no
 * registry answers), every service healthy by its own healthcheck, a sign-in and a create through
 * the frontend in Chromium, a runtime error that reaches the Healer with its token, and the data
 * kept across `down` + `up`. The builds dominate its cost; it prints how long they took.
 */

const ADMIN = { email: "admin@example.com", password: "admin-password" };
const SERVICES = ["app", "db", "frontend", "healer"];
const HEALTHY_TIMEOUT_MS = 240_000;

const root = mkdtempSync(join(tmpdir(), "charter-compose-"));
const out = join(root, "runtime");
// One name for every run (the test holds the tests lock): each build replaces the last images.
const project = "charter-compose-stack";
const secrets = {
  AUTH_SECRET: randomBytes(32).toString("hex"),
  POSTGRES_PASSWORD: randomBytes(16).toString("hex"),
  SVC_HEALER_TOKEN: randomBytes(16).toString("hex"),
};
const ports = { app: 0, healer: 0, frontend: 0 };
const url = (service: keyof typeof ports): string => `http://127.0.0.1:${ports[service]}`;

function compose(args: string[], timeout = 1_200_000): string {
  return execFileSync("docker", ["compose", "-p", project, ...args], {
    cwd: out,
    encoding: "utf8",
    timeout,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function timed<T>(label: string, run: () => T): T {
  const started = Date.now();
  const result = run();
  console.log(`[compose-stack] ${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

type PsRow = { Service: string; State: string; Health: string; Publishers?: { URL: string; PublishedPort: number }[] };

function ps(): PsRow[] {
  const text = compose(["ps", "--all", "--format", "json"]).trim();
  if (!text) return [];
  // Compose 2.21+ prints one JSON object per line; older ones print an array.
  return text.startsWith("[") ? (JSON.parse(text) as PsRow[]) : text.split("\n").map((l) => JSON.parse(l) as PsRow);
}

/** Waits until every service reports healthy by its healthcheck; fails with their states and logs. */
async function waitHealthy(): Promise<PsRow[]> {
  const deadline = Date.now() + HEALTHY_TIMEOUT_MS;
  let rows: PsRow[] = [];
  while (Date.now() < deadline) {
    rows = ps();
    if (rows.length === SERVICES.length && rows.every((r) => r.Health === "healthy")) return rows;
    if (rows.some((r) => r.State === "exited" || r.Health === "unhealthy")) break;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const states = rows.map((r) => `${r.Service}: ${r.State}/${r.Health}`).join(", ");
  throw new Error(`services not healthy (${states})\n${compose(["logs", "--no-color", "--tail", "40"])}`);
}

async function login(): Promise<string> {
  const r = await fetch(`${url("app")}/auth/login`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { access_token: string }).access_token;
}

async function customers(token: string): Promise<{ name: string }[]> {
  const r = await fetch(`${url("app")}/customers/?limit=100`, { headers: { Authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { items: { name: string }[] }).items;
}

/** An HS256 token for an invented admin, signed with `secret` (what an attacker forges). */
function forge(secret: string): string {
  const b64 = (v: object | Buffer): string => Buffer.from(v instanceof Buffer ? v : JSON.stringify(v)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const head = `${b64({ alg: "HS256", typ: "JWT" })}.${b64({ sub: "admin", email: "x@example.com", role: "admin", iss: "helpdesk", iat: now, exp: now + 600 })}`;
  return `${head}.${b64(createHmac("sha256", secret).update(head).digest())}`;
}

describe("the generated `all` target under docker compose", () => {
  let browser: Browser | undefined;

  beforeAll(async () => {
    timed("scripts/docker-setup.sh", () => execFileSync("bash", ["scripts/docker-setup.sh"], { stdio: "inherit", timeout: 1_200_000 }));
    // The example, with one contract mistake the validator does not catch: a string field
    // compared with a number raises TypeError in the app when a customer has a website.
    cpSync("examples/helpdesk", join(root, "domains"), { recursive: true });
    const routeFile = join(root, "domains", "routes", "customer_api.contract.yaml");
    const route = readFileSync(routeFile, "utf8").replace(
      "      validation:\n",
      '      validation:\n        - rule: "not is_set(website) or website >= 10"\n          on_fail:\n            status: 422\n            error: validation_error\n            message: never reached\n',
    );
    writeFileSync(routeFile, route);
    const { ir, findings } = checkDomain(join(root, "domains"));
    if (!ir) throw new Error(findings.map((f) => f.message).join("; "));
    writeFiles(out, generateTarget(ir, "all", out));
    // The Healer image installs this checkout of Charter, packed as a user would (docs/deploy.md).
    execFileSync("npm", ["pack", "--silent", "--pack-destination", join(out, "healer")], { stdio: ["ignore", "ignore", "inherit"] });
    ports.app = await freePort();
    ports.healer = await freePort();
    ports.frontend = await freePort();
    const env = {
      ...secrets,
      // The tests sign in as the contract's admin, which production seeds only when asked.
      AUTH_SEED_USERS: "true",
      APP_HOST_PORT: String(ports.app),
      HEALER_HOST_PORT: String(ports.healer),
      FRONTEND_HOST_PORT: String(ports.frontend),
    };
    writeFileSync(
      join(out, ".env"),
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(""),
    );
    timed("docker compose build", () => compose(["build"]));
    timed("docker compose up -d (to started)", () => compose(["up", "-d"]));
    const started = Date.now();
    await waitHealthy();
    console.log(`[compose-stack] all services healthy after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    browser = await launchChromium();
  }, 2_400_000);

  afterAll(async () => {
    await browser?.close();
    try {
      timed("docker compose down -v", () => compose(["down", "-v", "--remove-orphans"]));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 300_000);

  it("refuses to start without its secrets, naming the missing one", () => {
    const env = { ...process.env, AUTH_SECRET: "" };
    let message = "";
    try {
      execFileSync("docker", ["compose", "-p", `${project}-x`, "--env-file", "/dev/null", "config", "-q"], {
        cwd: out,
        env,
        stdio: "pipe",
      });
    } catch (e) {
      message = String((e as { stderr?: Buffer }).stderr ?? e);
    }
    expect(message).toMatch(/(AUTH_SECRET|POSTGRES_PASSWORD|SVC_HEALER_TOKEN) is not set: put 32 or more random bytes in \.env/);
  });

  it("runs db, app, Healer and frontend, healthy, publishing only the frontend on all interfaces", () => {
    const rows = ps();
    expect(rows.map((r) => r.Service).sort()).toEqual(SERVICES);
    for (const r of rows) expect(r.Health, r.Service).toBe("healthy");
    const published = (service: string): string[] =>
      (rows.find((r) => r.Service === service)?.Publishers ?? []).filter((p) => p.PublishedPort > 0).map((p) => p.URL);
    expect(published("db")).toEqual([]);
    expect(published("healer")).toEqual(["127.0.0.1"]);
    expect(published("app")).toEqual(["127.0.0.1"]);
    // All interfaces (IPv4 and, where the engine has it, IPv6).
    expect(published("frontend")).toContain("0.0.0.0");
    for (const address of published("frontend")) expect(["0.0.0.0", "::"]).toContain(address);
  });

  it("accepts no token forged with a guessable secret", async () => {
    for (const secret of ["change-me", "", "secret", "app"]) {
      const r = await fetch(`${url("app")}/auth/me`, { headers: { Authorization: `Bearer ${forge(secret)}` } });
      expect(r.status, secret).toBe(401);
    }
  });

  it("signs in through the frontend in Chromium and creates a record", async () => {
    const page = await (browser as Browser).newPage();
    try {
      await page.goto(`${url("frontend")}/login`);
      await page.getByTestId("login-email").fill(ADMIN.email);
      await page.getByTestId("login-password").fill(ADMIN.password);
      await page.getByTestId("login-submit").click();
      await page.waitForURL(`${url("frontend")}/`);
      await page.goto(`${url("frontend")}/customers/new`);
      await page.getByTestId("field-name").fill("Initech");
      await page.getByTestId("field-email").fill("bill@initech.example");
      await page.getByTestId("form-submit").click();
      await page.waitForURL(`${url("frontend")}/customers`);
      await expect.poll(() => page.getByText("Initech").count()).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
    expect((await customers(await login())).map((c) => c.name)).toContain("Initech");
  });

  it("reports a runtime error to the Healer with its token, which the Healer requires", async () => {
    const token = await login();
    const r = await fetch(`${url("app")}/customers/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: "Umbrella", email: "u@umbrella.example", website: "https://umbrella.example" }),
    });
    expect(r.status).toBe(500);
    // Ticket content is the owner's: with a token set, reading it needs the token too.
    expect((await fetch(`${url("healer")}/healer/tickets`)).status).toBe(401);
    const owner = { Authorization: `Bearer ${secrets.SVC_HEALER_TOKEN}` };
    const tickets = async (): Promise<string> => (await fetch(`${url("healer")}/healer/tickets`, { headers: owner })).text();
    await expect.poll(tickets, { timeout: 30_000, interval: 500 }).toContain("TypeError");
    expect(await tickets()).toContain("route/helpdesk/customer_api");
    // Without the token the Healer refuses a report: the app's got through because it sent it.
    const anonymous = await fetch(`${url("healer")}/healer/ingest`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ source: "runtime", error: "forged" }),
    });
    expect(anonymous.status).toBe(401);
    expect(compose(["logs", "--no-color", "app"])).not.toContain("could not report an error to the Healer");
  });

  it("keeps the record across down and up", async () => {
    timed("docker compose down", () => compose(["down"]));
    timed("docker compose up -d (restart)", () => compose(["up", "-d"]));
    await waitHealthy();
    expect((await customers(await login())).map((c) => c.name)).toContain("Initech");
  }, 400_000);

  it("down -v removes the containers and the volumes", () => {
    compose(["down", "-v"]);
    expect(ps()).toEqual([]);
    const volumes = execFileSync("docker", ["volume", "ls", "-q", "--filter", `label=com.docker.compose.project=${project}`], {
      encoding: "utf8",
    });
    expect(volumes.trim()).toBe("");
  });
});
