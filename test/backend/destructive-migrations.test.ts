import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confirmDestructive } from "../../src/dev/destructive.js";
import { createLog } from "../../src/dev/log.js";
import { generateBackend, type RunningBackend, startGeneratedBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { entityYaml, writeDomain } from "../support/domain.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { VENV_PYTHON } from "../support/python.js";

/**
 * A contract change that removes a field (as an approved Healer fix does) must not drop the column
 * on its own: DATABASE_MIGRATE=auto applies the additive part, holds the DROP COLUMN back, keeps
 * serving and names the command; only `python -m app.migrate --allow-destructive` drops it.
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
const V1_FIELDS = "    title:\n      type: string\n      required: true\n    website:\n      type: string\n      required: true\n";
const V2_FIELDS = "    title:\n      type: string\n      required: true\n    rank:\n      type: integer\n";

async function json(r: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

function rows(db: string, sql: string): string[] {
  return psql(db, sql, ["-At"]).trim().split("\n").filter(Boolean);
}

const websiteColumn = "SELECT column_name FROM information_schema.columns WHERE table_name = 'items' AND column_name = 'website';";

describe("destructive migrations are held back until the explicit command", () => {
  let root: string;
  let domain: string;
  let backendDir: string;
  let db: string;
  const running: RunningBackend[] = [];
  const start = async (): Promise<RunningBackend> => {
    const app = await startGeneratedBackend({
      domainDir: domain,
      outDir: join(root, "app"),
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      skipGenerate: true,
      anyHealth: true,
      env: { DATABASE_MIGRATE: "auto" },
    });
    running.push(app);
    return app;
  };
  const post = async (app: RunningBackend, body: unknown) =>
    json(await fetch(`${app.url}/items`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
  const migrateEnv = () => ({ ...process.env, DATABASE_BACKEND: "postgres", DATABASE_URL: databaseUrl(db), AUTH_SECRET: TEST_AUTH_SECRET });
  const migrate = (...args: string[]) =>
    spawnSync(VENV_PYTHON, ["-m", "app.migrate", ...args], { cwd: backendDir, env: migrateEnv(), encoding: "utf8" });
  /** `charter dev`'s question before a restart, answered `answer` (null: no terminal). */
  const devConfirm = async (answer: string | null): Promise<{ applied: boolean; out: string }> => {
    let out = "";
    const log = createLog((text) => {
      out += text;
    }, false);
    const ask =
      answer === null
        ? null
        : async (q: string) => {
            out += q;
            return answer;
          };
    const warnings = ["backend/db/migrations/0002_x.sql: drop column items.website (its data is lost)"];
    const applied = await confirmDestructive(warnings, ask, log, { python: VENV_PYTHON, cwd: backendDir, env: migrateEnv() });
    return { applied, out };
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "charter-destructive-"));
    domain = writeDomain({ "entities/item.contract.yaml": entityYaml("item", V1_FIELDS), "routes/item_api.contract.yaml": ROUTE });
    backendDir = generateBackend(domain, join(root, "app"));
    db = freshDatabase("destructive_migrations");
    const v1 = await start();
    try {
      for (const [title, website] of [
        ["Acme", "https://acme.test"],
        ["Bob", "https://bob.test"],
      ]) {
        const r = await post(v1, { title, website });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
    } finally {
      await v1.stop();
    }
    // The field goes (and another comes): the contracts change and the backend is regenerated.
    writeFileSync(join(domain, "entities/item.contract.yaml"), entityYaml("item", V2_FIELDS));
    generateBackend(domain, join(root, "app"));
  }, 300_000);
  afterAll(async () => {
    await Promise.all(running.map((a) => a.stop()));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("generates a migration whose DROP COLUMN is marked destructive", () => {
    const files = readdirSync(join(backendDir, "db", "migrations")).filter((f) => f.endsWith(".sql"));
    expect(files).toHaveLength(2);
    const sql = readFileSync(join(backendDir, "db", "migrations", files.sort()[1] as string), "utf8");
    expect(sql).toContain('-- charter: WARNING destructive: drop column items.website (its data is lost)\nALTER TABLE "items" DROP COLUMN');
  });

  it("keeps the column and its data on restart with DATABASE_MIGRATE=auto, serves, and names the command", async () => {
    const app = await start();
    try {
      const health = await json(await fetch(`${app.url}/health`));
      expect(health.status).toBe(200);
      expect(health.body.pending_destructive).toEqual([expect.stringContaining("drop column items.website (its data is lost)")]);
      expect(app.logs()).toContain("python -m app.migrate --allow-destructive");
      // The additive part is there, the destructive part is not.
      expect(rows(db, websiteColumn)).toEqual(["website"]);
      expect(rows(db, "SELECT title || '|' || website FROM items ORDER BY title;")).toEqual([
        "Acme|https://acme.test",
        "Bob|https://bob.test",
      ]);
      const created = await post(app, { title: "Carol", rank: 3 });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).not.toHaveProperty("website");
      const listed = await json(await fetch(`${app.url}/items`));
      expect(listed.status).toBe(200);
      expect(
        rows(db, "SELECT title || '|' || coalesce(website, '-') || '|' || coalesce(rank::text, '-') FROM items ORDER BY title;"),
      ).toEqual(["Acme|https://acme.test|-", "Bob|https://bob.test|-", "Carol|-|3"]);
      expect(rows(db, "SELECT version || '|' || warning FROM schema_migrations_held;")).toEqual([
        expect.stringMatching(/^0002_\w+\|drop column items\.website \(its data is lost\)$/),
      ]);
    } finally {
      await app.stop();
    }
  }, 120_000);

  it("holds it back on the plain command too, and restarts keep it pending", async () => {
    const plain = migrate();
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stderr).toContain("run `python -m app.migrate --allow-destructive`");
    expect(rows(db, websiteColumn)).toEqual(["website"]);
    const app = await start();
    try {
      expect((await json(await fetch(`${app.url}/health`))).body.pending_destructive).toHaveLength(1);
    } finally {
      await app.stop();
    }
  }, 120_000);

  it("charter dev asks first: no, or no terminal, keeps the column and prints the command", async () => {
    for (const answer of [null, "", "n", "nope"]) {
      const { applied, out } = await devConfirm(answer);
      expect(applied, String(answer)).toBe(false);
      expect(out).toContain("drop column items.website (its data is lost)");
      expect(out).toContain("held back: the backend keeps the old columns");
      expect(out).toContain(`run \`python -m app.migrate --allow-destructive\` in ${backendDir}`);
      if (answer !== null) expect(out).toContain("[y/N]");
    }
    expect(rows(db, websiteColumn)).toEqual(["website"]);
  }, 60_000);

  it("drops the column with `python -m app.migrate --allow-destructive` (charter dev's yes runs it), once", async () => {
    const { applied, out } = await devConfirm("y");
    expect(applied, out).toBe(true);
    expect(out).toContain("applying destructive step of 0002_");
    expect(out).toContain("destructive steps applied");
    expect(rows(db, websiteColumn)).toEqual([]);
    expect(rows(db, "SELECT count(*) FROM schema_migrations_held;")).toEqual(["0"]);
    expect(rows(db, "SELECT title FROM items ORDER BY title;")).toEqual(["Acme", "Bob", "Carol"]);
    const again = migrate("--allow-destructive");
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("applying destructive step");
    const app = await start();
    try {
      const health = await json(await fetch(`${app.url}/health`));
      expect(health.status).toBe(200);
      expect(health.body.pending_destructive).toEqual([]);
      expect((await post(app, { title: "Dave" })).status).toBe(201);
    } finally {
      await app.stop();
    }
  }, 120_000);

  it("answers 503 destructive_migration_pending when the rest of a migration needs the held step", async () => {
    // A hand-written migration whose additive step needs its destructive one: the column is dropped
    // and added again with another type.
    const name = "0099_retype_items_title.sql";
    writeFileSync(
      join(backendDir, "db", "migrations", name),
      '-- charter: WARNING destructive: drop column items.title (its data is lost)\nALTER TABLE "items" DROP COLUMN IF EXISTS "title";\n\nALTER TABLE "items" ADD COLUMN "title" BIGINT;\n',
    );
    try {
      const app = await start();
      try {
        const health = await json(await fetch(`${app.url}/health`));
        expect(health.status).toBe(503);
        expect(health.body.error).toBe("destructive_migration_pending");
        expect(health.body.message).toContain(name);
        expect(health.body.message).toContain("python -m app.migrate --allow-destructive");
        expect((await fetch(`${app.url}/items`)).status).toBe(503);
        // Nothing of it was applied.
        expect(rows(db, "SELECT data_type FROM information_schema.columns WHERE table_name = 'items' AND column_name = 'title';")).toEqual([
          "text",
        ]);
        expect(rows(db, `SELECT count(*) FROM schema_migrations WHERE version = '${name.slice(0, -4)}';`)).toEqual(["0"]);
      } finally {
        await app.stop();
      }
    } finally {
      rmSync(join(backendDir, "db", "migrations", name));
    }
  }, 120_000);
});
