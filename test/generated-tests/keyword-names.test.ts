import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import type { DomainIR } from "../../src/compiler/index.js";
import { REQUIREMENTS } from "../../src/generators/fastapi/app-modules.js";
import { generateTarget } from "../../src/generators/registry.js";
import type { GeneratedFile } from "../../src/generators/types.js";
import { writeFiles } from "../../src/generators/writer.js";
import { prepareNextApp } from "../frontend/support/next-app.mjs";
import { startGeneratedBackend } from "../support/backend.js";
import { entityYaml, writeDomain } from "../support/domain.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { ensureVenv, VENV_BIN } from "../support/python.js";

/**
 * TypeScript keywords and globals, SQL keywords and the generated app's own table names as entity
 * and field names, and agents named like the generated agent module's own constants: the schema
 * and the migrations apply with psql, the frontend passes tsc and biome, the backend passes ruff
 * and mypy and serves every entity's list, create and get (what each page calls) on both
 * repositories. docs/contracts.md describes the one rename (`<name>_records` tables).
 */
const TS_NAMES = ["delete", "new", "default", "function", "class", "type", "interface", "record", "date", "object"];
const TS_GLOBALS = ["array", "promise", "response", "error", "map", "string", "number"];
const SQL_NAMES = ["order", "user", "select", "group", "table", "from", "limit", "offset", "check", "primary"];
/** Their plurals are tables of the app itself. */
const SYSTEM_NAMES = ["event", "agent_run"];
const ENTITY_NAMES = [...TS_NAMES, ...TS_GLOBALS, ...SQL_NAMES, ...SYSTEM_NAMES];
const FIELD_NAMES = [...new Set([...TS_NAMES, ...TS_GLOBALS, ...SQL_NAMES])];
/** `AGENTS`, `SUBSCRIPTIONS` and `ORDER_UPDATES` are app/agent_specs.py's own names. */
const AGENT_NAMES = ["agents", "subscriptions", "order_updates"];

const route = (entity: string): string => `apiVersion: charter/v1
kind: Route
metadata: {name: ${entity}_api, domain: shop}
spec:
  entity: entity/shop/${entity}
  endpoints:
    - {method: GET, path: /}
    - method: POST
      path: /
      side_effects: [{emit_event: ${entity}_created}]
    - {method: GET, path: "/{id}"}
    - {method: PATCH, path: "/{id}"}
    - {method: DELETE, path: "/{id}"}
`;

const page = (entity: string, columns: readonly string[], filters: readonly string[]): string => `apiVersion: charter/v1
kind: Page
metadata: {name: ${entity}_page, domain: shop}
spec:
  route: /${entity.replace(/_/g, "-")}
  entity: entity/shop/${entity}
  generation_tier: mechanical
  views:
    - {type: table, columns: [${columns.join(", ")}]}
${filters.length > 0 ? `  filters: [${filters.join(", ")}]\n` : ""}`;

const agent = (name: string): string => `apiVersion: charter/v1
kind: Agent
metadata: {name: ${name}, domain: shop}
spec:
  trigger: order_created
  input: {entity: entity/shop/order, fields: [title]}
  output: {updates: [type]}
  threshold: 0.8
  approach: Classify the order
  fallback: {action: leave_unchanged}
`;

function files(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of ENTITY_NAMES) {
    const order = e === "order";
    const fields = order
      ? [
          "    title:\n      type: string\n      required: true\n",
          ...FIELD_NAMES.filter((f) => f !== "order").map((f) => `    ${f}:\n      type: string\n`),
          "    user_id:\n      type: uuid\n      references:\n        entity: entity/shop/user\n",
        ].join("")
      : "    title:\n      type: string\n      required: true\n";
    out[`entities/${e}.contract.yaml`] = entityYaml(e, fields);
    out[`routes/${e}_api.contract.yaml`] = route(e);
    out[`pages/${e}_page.contract.yaml`] = order
      ? page(e, ["title", "type", "class", "from", "select", "default", "user_id"], ["type", "class", "from"])
      : page(e, ["title"], []);
  }
  for (const a of AGENT_NAMES) out[`agents/${a}.contract.yaml`] = agent(a);
  return out;
}

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout: 300_000 });
  const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  expect(r.status, `${cmd} ${args.join(" ")}\n${output}`).toBe(0);
  return output;
}

describe("an app whose contracts use TypeScript, SQL and its own names", () => {
  let domain: string;
  let ir: DomainIR;
  let root: string;
  beforeAll(() => {
    domain = writeDomain(files());
    const checked = checkDomain(domain);
    if (!checked.ir) throw new Error(`does not compile: ${checked.findings.map((f) => f.message).join("; ")}`);
    expect(checked.findings.filter((f) => f.severity === "error")).toEqual([]);
    ir = checked.ir;
    root = mkdtempSync(join(tmpdir(), "charter-keywords-"));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("keeps the app's own tables apart from the entities'", () => {
    const tables = new Map(ir.entities.map((e) => [e.name, e.table]));
    expect(tables.get("event")).toBe("event_records");
    expect(tables.get("agent_run")).toBe("agent_run_records");
    expect(tables.get("order")).toBe("orders");
  });

  it("applies schema.sql and then the migrations to empty databases with psql", () => {
    const out = join(root, "sql");
    for (const target of ["postgres", "migrations"]) writeFiles(out, generateTarget(ir, target, out));
    const db = join(out, "backend", "db");
    const schemaDb = freshDatabase("keyword_names_schema");
    psql(schemaDb, readFileSync(join(db, "schema.sql"), "utf8"));
    // Twice: every start re-applies it.
    psql(schemaDb, readFileSync(join(db, "schema.sql"), "utf8"));
    const migratedDb = freshDatabase("keyword_names_migrations");
    const migrations = readdirSync(join(db, "migrations")).filter((f) => f.endsWith(".sql"));
    expect(migrations.length).toBeGreaterThan(0);
    for (const m of migrations.sort()) psql(migratedDb, readFileSync(join(db, "migrations", m), "utf8"));
    const listed = psql(migratedDb, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1;", ["-At"]).split("\n");
    for (const e of ir.entities) expect(listed).toContain(e.table);
    expect(listed).toContain("events");
    expect(listed).toContain("agent_runs");
    const columns = psql(migratedDb, "SELECT column_name FROM information_schema.columns WHERE table_name = 'orders';", ["-At"]);
    for (const f of FIELD_NAMES.filter((n) => n !== "order")) expect(columns.split("\n")).toContain(f);
  });

  it("generates a frontend that passes tsc and biome check", () => {
    const generated: GeneratedFile[] = generateTarget(ir, "nextjs", join(root, "web"));
    // The app's own dependencies (typescript, the React and Next.js types), installed once per
    // package.json in .cache/nextjs; tsc needs no `next build`.
    const { appDir } = prepareNextApp(generated, { slot: "names" });
    run(join(appDir, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", "."], appDir);
    const out = join(root, "web");
    writeFiles(out, generated);
    const biome = resolve(import.meta.dirname, "../../node_modules/.bin/biome");
    run(biome, ["check", "--max-diagnostics=50", "."], join(out, "frontend"));
    // The renamed types: a global or a static file's export is never shadowed.
    const types = generated.find((f) => f.path === "frontend/src/lib/types.ts")?.content ?? "";
    for (const t of ["RecordEntity", "PromiseEntity", "DateEntity", "ResponseEntity", "Order", "User"]) {
      expect(types).toContain(`export interface ${t} {`);
    }
  }, 900_000);

  it("generates a backend that passes ruff check and mypy, with one constant per agent", () => {
    ensureVenv([...REQUIREMENTS, "mypy==2.4.1"]);
    const out = join(root, "lint");
    writeFiles(out, generateTarget(ir, "fastapi-prod", out));
    const backend = join(out, "backend");
    expect(run(join(VENV_BIN, "ruff"), ["check", "--no-cache", "."], backend)).toContain("All checks passed");
    expect(run(join(VENV_BIN, "mypy"), ["--cache-dir", join(root, ".mypy"), "app"], backend)).toContain("Success");
    const specs = readFileSync(join(backend, "app", "agent_specs.py"), "utf8");
    const constants = [...specs.matchAll(/^([A-Z][A-Z0-9_]*) = /gm)].map((m) => m[1]);
    expect(new Set(constants).size, constants.join(", ")).toBe(constants.length);
    expect(specs).toMatch(/^AGENTS = \(AGENTS_AGENT, ORDER_UPDATES_AGENT, SUBSCRIPTIONS_AGENT\)$/m);
  }, 600_000);

  for (const backend of ["memory", "postgres"] as const) {
    it(`serves list, create and get of every entity on ${backend}`, async () => {
      const app = await startGeneratedBackend({
        domainDir: domain,
        outDir: join(root, backend),
        backend,
        ...(backend === "postgres"
          ? { databaseUrl: databaseUrl(freshDatabase("keyword_names_app")), env: { DATABASE_MIGRATE: "auto" } }
          : {}),
      });
      try {
        for (const e of ir.entities) {
          const base = `${app.url}${e.basePath}`;
          const body: Record<string, string> = { title: `a ${e.name}` };
          if (e.name === "order") for (const f of FIELD_NAMES.filter((n) => n !== "order")) body[f] = `${f} value`;
          const created = await fetch(`${base}/`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          const record = (await created.json()) as Record<string, unknown>;
          expect(created.status, `${e.name}: ${JSON.stringify(record)}\n${app.logs().slice(-3000)}`).toBe(201);
          for (const [k, v] of Object.entries(body)) expect(record[k], `${e.name}.${k}`).toBe(v);
          const got = await fetch(`${base}/${record.id}`);
          expect(got.status, e.name).toBe(200);
          expect(await got.json()).toMatchObject(body);
          const list = await fetch(`${base}/`);
          const page = (await list.json()) as { items: { id: string }[] };
          expect(list.status, e.name).toBe(200);
          expect(page.items.map((r) => r.id)).toContain(record.id);
        }
      } finally {
        await app.stop();
      }
    }, 600_000);
  }
});
