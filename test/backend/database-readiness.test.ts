import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend, type RunningBackend, startGeneratedBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { entityYaml, writeDomain } from "../support/domain.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { ensureVenvFromFile, VENV_PYTHON } from "../support/python.js";

/**
 * The generated app on an empty PostgreSQL database: with DATABASE_MIGRATE=auto it applies its
 * migrations on start (once, under an advisory lock, however many replicas start together);
 * without, it answers 503 naming the command to run until the tables are there.
 */
const ROUTE = `apiVersion: charter/v1
kind: Route
metadata: {name: item_api, domain: shop}
spec:
  entity: entity/shop/item
  endpoints:
    - {method: GET, path: /}
    - {method: POST, path: /}
    - {method: GET, path: "/{id}"}
`;

async function json(r: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

function tables(db: string): string[] {
  return psql(db, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1;", ["-At"]).trim().split("\n");
}

describe("database readiness of the generated app", () => {
  let root: string;
  let domain: string;
  let backendDir: string;
  let migrations: string[];
  const running: RunningBackend[] = [];
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "charter-readiness-"));
    domain = writeDomain({
      "entities/item.contract.yaml": entityYaml("item", "    title:\n      type: string\n      required: true\n"),
      "routes/item_api.contract.yaml": ROUTE,
    });
    backendDir = generateBackend(domain, join(root, "app"));
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
    migrations = readdirSync(join(backendDir, "db", "migrations")).filter((f) => f.endsWith(".sql"));
  }, 300_000);
  afterAll(async () => {
    await Promise.all(running.map((a) => a.stop()));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const start = async (db: string, migrate: string | null): Promise<RunningBackend> => {
    const app = await startGeneratedBackend({
      domainDir: domain,
      outDir: join(root, "app"),
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      skipGenerate: true,
      anyHealth: true,
      ...(migrate ? { env: { DATABASE_MIGRATE: migrate } } : { unset: ["DATABASE_MIGRATE"] }),
    });
    running.push(app);
    return app;
  };

  it("creates the tables on an empty database with DATABASE_MIGRATE=auto and reports healthy", async () => {
    const db = freshDatabase("readiness_auto");
    const app = await start(db, "auto");
    try {
      expect((await fetch(`${app.url}/health`)).status).toBe(200);
      expect(tables(db)).toEqual(expect.arrayContaining(["items", "events", "schema_migrations"]));
      const created = await json(
        await fetch(`${app.url}/items`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"title": "a"}' }),
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    } finally {
      await app.stop();
    }
  }, 120_000);

  it("answers 503 naming the command on an empty database without it, then serves once it has run", async () => {
    const db = freshDatabase("readiness_off");
    const app = await start(db, null);
    try {
      const health = await json(await fetch(`${app.url}/health`));
      expect(health.status).toBe(503);
      expect(health.body.error).toBe("database_not_ready");
      expect(health.body.message).toContain("python -m app.migrate");
      expect(health.body.message).toContain("items");
      // Every request: a clear 503, never a 500 from a missing relation.
      for (const [method, path, body] of [
        ["GET", "/items", undefined],
        ["POST", "/items", '{"title": "a"}'],
        ["GET", "/items/00000000-0000-0000-0000-000000000000", undefined],
      ] as const) {
        const r = await json(
          await fetch(`${app.url}${path}`, { method, headers: { "content-type": "application/json" }, ...(body ? { body } : {}) }),
        );
        expect(r.status, `${method} ${path}`).toBe(503);
        expect(r.body.message).toContain("python -m app.migrate");
      }
      // The API's documentation needs no database.
      expect((await fetch(`${app.url}/openapi.json`)).status).toBe(200);
      expect(tables(db)).not.toContain("items");
    } finally {
      await app.stop();
    }
    // The command the message names, then a restart: ready.
    const migrate = spawnSync(VENV_PYTHON, ["-m", "app.migrate"], {
      cwd: backendDir,
      env: { ...process.env, DATABASE_BACKEND: "postgres", DATABASE_URL: databaseUrl(db), AUTH_SECRET: TEST_AUTH_SECRET },
      encoding: "utf8",
    });
    expect(migrate.status, migrate.stderr).toBe(0);
    const again = await start(db, "off");
    try {
      expect((await fetch(`${again.url}/health`)).status).toBe(200);
      expect((await fetch(`${again.url}/items`)).status).toBe(200);
    } finally {
      await again.stop();
    }
  }, 120_000);

  it("runs the migrations once when two apps start on an empty database at the same time", async () => {
    const db = freshDatabase("readiness_race");
    const apps = await Promise.all([start(db, "auto"), start(db, "auto")]);
    try {
      for (const app of apps) expect((await fetch(`${app.url}/health`)).status, app.logs()).toBe(200);
      const applied = psql(db, "SELECT version FROM schema_migrations ORDER BY 1;", ["-At"]).trim().split("\n");
      expect(applied).toEqual(migrations.map((m) => m.replace(/\.sql$/, "")).sort());
      const [a, b] = apps as [RunningBackend, RunningBackend];
      const created = await json(
        await fetch(`${a.url}/items`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"title": "x"}' }),
      );
      expect(created.status).toBe(201);
      expect((await fetch(`${b.url}/items/${created.body.id}`)).status).toBe(200);
    } finally {
      await Promise.all(apps.map((app) => app.stop()));
    }
  }, 120_000);
});
