import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_DEV_START_MS, type ExampleDev, killDevTree, startExampleDev } from "../support/dev-example.js";
import { freePort } from "../support/net.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { alive, type DevRun, descendants, json, startDev } from "./support.js";

const root = mkdtempSync(join(tmpdir(), "charter-dev-"));
const AGENT = join("helpdesk", "entities", "agent.contract.yaml");

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function login(api: string): Promise<string> {
  const r = await json(`${api}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "admin@example.com", password: "admin-password" }),
  });
  expect(r.status).toBe(200);
  return (r.body as { access_token: string }).access_token;
}

async function createAgent(api: string, token: string, team: string): Promise<number> {
  const r = await json(`${api}/agents`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: "Dev test", email: "dev@example.com", team }),
  });
  return r.status;
}

describe("charter dev on the example (backend, Healer, frontend)", () => {
  const dir = join(root, "full");
  let dev: DevRun;
  let ports: ExampleDev["ports"];

  beforeAll(async () => {
    ({ dev, ports } = await startExampleDev(dir));
  }, EXAMPLE_DEV_START_MS);

  afterAll(() => killDevTree(dev));

  it("prints the addresses and the login hint, in one prefixed log without colours under NO_COLOR", () => {
    const out = dev.output();
    expect(out).toContain(`API        http://127.0.0.1:${ports.api}`);
    expect(out).toContain(`Frontend   http://127.0.0.1:${ports.frontend}`);
    expect(out).toContain("Log in as  admin@example.com / admin-password (admin)");
    expect(out).toMatch(/^backend {2}\| INFO: +Uvicorn running/m);
    expect(out).toMatch(/^frontend \| /m);
    expect(out).toMatch(/^dev {6}\| /m);
    expect(out).not.toContain("\u001b[");
  });

  it("serves the backend, the frontend and the Healer", async () => {
    expect(await json(`http://127.0.0.1:${ports.api}/health`)).toEqual({
      status: 200,
      body: { status: "ok", domain: "helpdesk", pending_destructive: [] },
    });
    const page = await fetch(`http://127.0.0.1:${ports.frontend}/login`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<html");
    expect(await json(`http://127.0.0.1:${ports.healer}/healer/health`)).toEqual({
      status: 200,
      body: { status: "ok", service: "healer" },
    });
    expect(dev.output()).toContain(`Healer     http://127.0.0.1:${ports.healer}/healer `);
  });

  it("makes a contract edit live within seconds", async () => {
    const api = `http://127.0.0.1:${ports.api}`;
    const token = await login(api);
    expect(await createAgent(api, token, "sales")).toBe(422);
    const from = dev.output().length;
    const file = join(dir, AGENT);
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace("enum: [support, engineering, billing]", "enum: [support, engineering, billing, sales]"),
    );
    // How fast is bench/dev.mjs's business; here it must simply happen while the test waits.
    await dev.waitFor(/backend live again \d+ ms after the change/, 30_000, from);
    // The token still works: the secret lives as long as charter dev, not one backend process.
    expect(await createAgent(api, token, "sales")).toBe(201);
  });

  it("reports a broken edit and keeps the running app serving", async () => {
    const api = `http://127.0.0.1:${ports.api}`;
    const from = dev.output().length;
    const file = join(dir, AGENT);
    const good = readFileSync(file, "utf8");
    writeFileSync(file, good.replace("    name:\n      type: string", "    name:\n      type: strng"));
    await dev.waitFor(/the running backend keeps serving the last good version/, 30_000, from);
    expect(dev.output().slice(from)).toMatch(/agent\.contract\.yaml:\d+:\d+: error: 'strng' is not one of/);
    const token = await login(api);
    expect(await createAgent(api, token, "sales")).toBe(201);
    writeFileSync(file, good);
    await dev.waitFor(/contracts changed|generated backend is the same/, 30_000, from);
  });

  it(
    "rebuilds the frontend in the background when a page changes, the old one serving until the new one is ready",
    async () => {
      const web = `http://127.0.0.1:${ports.frontend}`;
      // Signed out, a page that exists sends to sign-in; one that does not is a 404.
      expect((await fetch(`${web}/clients`, { redirect: "manual" })).status).toBe(404);
      // The earlier edits changed the frontend too: their rebuild finishes first.
      const settled = (): boolean => {
        const out = dev.output();
        const started = out.lastIndexOf("rebuilding it in the background");
        return started < 0 || /frontend live again|rebuilding the frontend failed/.test(out.slice(started));
      };
      for (const deadline = Date.now() + 10 * 60_000; !settled(); await new Promise((r) => setTimeout(r, 250))) {
        if (Date.now() > deadline) throw new Error(`an earlier frontend rebuild never finished:\n${dev.output()}`);
      }
      const from = dev.output().length;
      const file = join(dir, "helpdesk", "pages", "customers.contract.yaml");
      writeFileSync(file, readFileSync(file, "utf8").replace("route: /customers", "route: /clients"));
      await dev.waitFor(/rebuilding it in the background/, 60_000, from);
      const statuses: number[] = [];
      while (!/frontend live again/.test(dev.output().slice(from))) {
        if (dev.proc.exitCode !== null) throw new Error(`charter dev exited:\n${dev.output().slice(from)}`);
        statuses.push((await fetch(`${web}/login`, { signal: AbortSignal.timeout(10_000) })).status);
        await new Promise((r) => setTimeout(r, 250));
      }
      // Every request during the build was served by the old server.
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      // Connections opened before the swap finish on the old server (its grace is 2 s); new ones reach the new.
      await expect
        .poll(async () => (await fetch(`${web}/clients`, { redirect: "manual" })).headers.get("location"), { timeout: 15_000 })
        .toMatch(/\/login\?next=%2Fclients/);
    },
    15 * 60_000,
  );

  it("stops every process it started on Ctrl-C", async () => {
    const pids = descendants(dev.proc.pid as number);
    // uvicorn, the frontend server and (when it exists) the Healer, plus what they started.
    expect(pids.length).toBeGreaterThanOrEqual(3);
    dev.proc.kill("SIGINT");
    expect(await dev.exited).toBe(0);
    expect(dev.output()).toMatch(/Ctrl-C: stopping[\s\S]*stopped/);
    expect(pids.filter(alive)).toEqual([]);
    await expect(fetch(`http://127.0.0.1:${ports.api}/health`)).rejects.toThrow();
  });
});

describe("charter dev without a frontend", () => {
  it("stops every process on SIGTERM", async () => {
    const dir = join(root, "term");
    cpSync("examples/helpdesk", join(dir, "helpdesk"), { recursive: true });
    const port = await freePort();
    const dev = startDev(["helpdesk", "--port", String(port), "--healer-port", String(await freePort()), "--no-frontend"], dir);
    await dev.waitFor(/Watching helpdesk for changes/, 120_000);
    expect(dev.output()).not.toContain("Frontend   http");
    const pids = descendants(dev.proc.pid as number);
    expect(pids.length).toBeGreaterThanOrEqual(1);
    dev.proc.kill("SIGTERM");
    expect(await dev.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  }, 180_000);

  it("uses PostgreSQL when DATABASE_URL is set, the schema applied on start", async () => {
    const dir = join(root, "pg");
    cpSync("examples/helpdesk", join(dir, "helpdesk"), { recursive: true });
    const db = freshDatabase("charter_dev_postgres");
    const port = await freePort();
    const dev = startDev(["helpdesk", "--port", String(port), "--healer-port", String(await freePort()), "--no-frontend"], dir, {
      DATABASE_URL: databaseUrl(db),
    });
    try {
      await dev.waitFor(/Watching helpdesk for changes/, 120_000);
      expect(dev.output()).toContain("Storage    PostgreSQL (DATABASE_URL)");
      const api = `http://127.0.0.1:${port}`;
      expect(await createAgent(api, await login(api), "billing")).toBe(201);
      expect(psql(db, "SELECT count(*) FROM support_agents WHERE email = 'dev@example.com';", ["-t", "-A"]).trim()).toBe("1");
      expect(existsSync(join(dir, "runtime", "backend", "db", "migrations", "0001_initial.sql"))).toBe(true);
    } finally {
      dev.proc.kill("SIGINT");
      await dev.exited;
    }
  }, 180_000);

  it("refuses a busy port with a clear message and starts nothing", async () => {
    const dir = join(root, "busy");
    cpSync("examples/helpdesk", join(dir, "helpdesk"), { recursive: true });
    const blocker: Server = createServer();
    const port = await freePort();
    await new Promise<void>((r) => blocker.listen(port, "127.0.0.1", r));
    try {
      const dev = startDev(["helpdesk", "--port", String(port), "--no-frontend"], dir);
      expect(await dev.exited).toBe(1);
      expect(dev.output()).toContain(
        `error: port ${port} (backend) is already in use by another process; stop it or set PORT (or --port) to another port`,
      );
      expect(dev.output()).not.toContain("Uvicorn running");
    } finally {
      blocker.close();
    }
  }, 60_000);

  it("refuses contracts that do not validate, naming the file and place", async () => {
    const dir = join(root, "invalid");
    cpSync("examples/broken/naming", join(dir, "broken"), { recursive: true });
    const dev = startDev(["broken", "--port", String(await freePort()), "--no-frontend"], dir);
    expect(await dev.exited).toBe(1);
    expect(dev.output()).toMatch(/product\.contract\.yaml:4:9: error: 'ProductItem' does not match/);
    expect(dev.output()).toContain("error: the contracts under broken do not validate");
  }, 60_000);
});
