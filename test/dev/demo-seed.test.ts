import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../support/net.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { VENV_DIR } from "../support/python.js";
import { json, startDev } from "./support.js";

// The demo seeds only after every service answered, only into an empty store,
// and never when charter dev failed.
const root = mkdtempSync(join(tmpdir(), "charter-seed-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function seed(pid: number, ...urls: string[]): { status: number | null; out: string } {
  const r = spawnSync(join(VENV_DIR, "bin", "python"), [resolve("scripts/demo-seed.py"), String(pid), ...urls], {
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

async function customers(api: string): Promise<number> {
  const login = await json(`${api}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "admin@example.com", password: "admin-password" }),
  });
  const token = (login.body as { access_token: string }).access_token;
  const r = await json(`${api}/customers?limit=100`, { headers: { authorization: `Bearer ${token}` } });
  return (r.body as { items: unknown[] }).items.length;
}

describe.each([
  ["memory", () => ({})],
  ["PostgreSQL", () => ({ DATABASE_URL: databaseUrl(freshDatabase("charter_dev_demo_seed")) })],
])("the demo's seeding on %s", (store, env) => {
  it("seeds once every service answers, never twice across restarts, and not without charter dev", async () => {
    const dir = join(root, store);
    cpSync("examples/helpdesk", join(dir, "helpdesk"), { recursive: true });
    const ports = { api: await freePort(), healer: await freePort() };
    const api = `http://127.0.0.1:${ports.api}`;
    const healer = `http://127.0.0.1:${ports.healer}/healer/health`;
    const storeEnv = env();
    const args = ["helpdesk", "--port", String(ports.api), "--healer-port", String(ports.healer), "--no-frontend"];

    // A charter dev that is gone: nothing is seeded, whatever might answer on the port.
    const gone = spawnSync("true");
    expect(seed(gone.pid as number, api, healer)).toMatchObject({ status: 1, out: expect.stringContaining("nothing seeded") });

    for (const [run, expected] of [
      [1, /seeded 2 customers/],
      [2, /already holds data; not seeding again/],
    ] as const) {
      const dev = startDev(args, dir, storeEnv);
      try {
        // Started at once, as demo.sh does: the seeder waits for every service itself.
        const r = seed(dev.proc.pid as number, api, healer);
        expect(r.status, r.out).toBe(0);
        expect(r.out).toMatch(expected);
        await dev.waitFor(/Watching helpdesk for changes/, 10_000);
        expect(await customers(api), `run ${run}`).toBe(2);
      } finally {
        dev.proc.kill("SIGINT");
        await dev.exited;
      }
    }
  }, 240_000);
});
