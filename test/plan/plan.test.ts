import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CHARTER = resolve("dist/cli/charter.js");
const ADMIN = "postgres://postgres@127.0.0.1:5432/postgres";
const DB = "charter_plan_test";

const entity = (name: string, fields: string): string =>
  `apiVersion: charter/v1\nkind: Entity\nmetadata:\n  name: ${name}\n  domain: memo\nspec:\n  fields:\n${fields}`;

function charter(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [CHARTER, ...args], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1", ...env } });
}

describe("charter plan", () => {
  let work: string;
  const domain = (): string => join(work, "domain");
  const out = (): string => join(work, "out");

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "charter-plan-"));
    mkdirSync(domain());
    writeFileSync(join(domain(), "note.contract.yaml"), entity("note", "    title:\n      type: string\n      required: true\n"));
    writeFileSync(join(domain(), "tag.contract.yaml"), entity("tag", "    label:\n      type: string\n      required: true\n"));
    expect(charter(["forge", "generate", domain(), "-t", "migrations", "-o", out()]).status).toBe(0);
    const admin = new pg.Client({ connectionString: ADMIN });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.query(`CREATE DATABASE ${DB}`);
    await admin.end();
    const db = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${DB}` });
    await db.connect();
    await db.query(readFileSync(join(out(), "backend/db/migrations/0001_initial.sql"), "utf8"));
    await db.query(`INSERT INTO tags (label) VALUES ('a'), ('b'), ('c')`);
    await db.end();
  });

  afterAll(async () => {
    const admin = new pg.Client({ connectionString: ADMIN });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.end();
    rmSync(work, { recursive: true, force: true });
  });

  it("exits 0 and lists nothing when generate would change nothing", () => {
    const r = charter(["plan", domain(), "-t", "migrations", "-o", out(), "--format", "json"]);
    expect(r.status).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.added).toEqual([]);
    expect(plan.changed).toEqual([]);
    expect(plan.migration).toBeNull();
  });

  it("calls a removed entity's table drop destructive, with its row count from PostgreSQL, writing nothing", () => {
    rmSync(join(domain(), "tag.contract.yaml"));
    const r = charter(["plan", domain(), "-t", "migrations", "-o", out(), "--format", "json"], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${DB}`,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(2);
    const plan = JSON.parse(r.stdout);
    expect(plan.added.map((f: { path: string }) => f.path)).toEqual([expect.stringMatching(/^backend\/db\/migrations\/0002_.*\.sql$/)]);
    expect(plan.added[0].added).toBeGreaterThan(0);
    expect(plan.changed).toEqual([{ path: "backend/db/migrations/snapshot.json", added: expect.any(Number), removed: expect.any(Number) }]);
    expect(plan.migration.destructive).toEqual([expect.objectContaining({ table: "tags", rows: 3 })]);
    // Nothing written: a second plan sees the same.
    expect(charter(["plan", domain(), "-t", "migrations", "-o", out(), "--format", "json"]).stdout).toContain("0002_");
  });

  it("keeps a file edited by hand, as generate would", () => {
    const snapshot = join(out(), "backend/db/migrations/snapshot.json");
    writeFileSync(snapshot, `${readFileSync(snapshot, "utf8")}\n`);
    const plan = JSON.parse(charter(["plan", domain(), "-t", "migrations", "-o", out(), "--format", "json"]).stdout);
    expect(plan.kept).toContainEqual({ path: "backend/db/migrations/snapshot.json", reason: "edited", stale: false });
  });

  it("keeps the data of a renamed field: the column is renamed, nothing is destructive", () => {
    const fresh = join(work, "renamed");
    mkdirSync(fresh);
    writeFileSync(join(fresh, "note.contract.yaml"), entity("note", "    title:\n      type: string\n      required: true\n"));
    const target = join(work, "renamed-out");
    expect(charter(["forge", "generate", fresh, "-t", "migrations", "-o", target]).status).toBe(0);
    writeFileSync(
      join(fresh, "note.contract.yaml"),
      entity("note", "    heading:\n      type: string\n      required: true\n      renamed_from: title\n"),
    );
    const r = charter(["plan", fresh, "-t", "migrations", "-o", target, "--format", "json"]);
    expect(r.status).toBe(2);
    const plan = JSON.parse(r.stdout);
    expect(plan.migration.destructive).toEqual([]);
    expect(plan.added[0].path).toMatch(/^backend\/db\/migrations\/0002_.*\.sql$/);
  });

  it("shows the generators' warnings as located findings, in JSON and in text, and counts them", () => {
    const fresh = join(work, "warned");
    mkdirSync(fresh);
    const file = join(fresh, "customer.contract.yaml");
    writeFileSync(file, entity("customer", "    name:\n      type: string\n      required: true\n"));
    const target = join(work, "warned-out");
    expect(charter(["forge", "generate", fresh, "-t", "migrations", "-o", target]).status).toBe(0);
    writeFileSync(
      file,
      entity("customer", "    name:\n      type: string\n      required: true\n    country:\n      type: string\n      required: true\n"),
    );
    const r = charter(["plan", fresh, "-t", "migrations", "-o", target, "--format", "json"]);
    expect(r.status).toBe(2);
    const plan = JSON.parse(r.stdout);
    const migration = plan.added[0].path as string;
    expect(migration).toBe("backend/db/migrations/0002_add_customers_country.sql");
    const message = "customers.country is required without a default; added as nullable, NOT NULL enforced only when the table is empty";
    expect(plan.findings).toEqual([
      {
        code: "generate.review",
        severity: "warning",
        message,
        file: migration,
        line: expect.any(Number),
        column: 1,
        contract: { file, line: 11, column: 5, path: "/spec/fields/country", fqn: "entity/memo/customer" },
      },
    ]);
    expect(plan.summary).toEqual({
      files: { add: 1, change: 1, remove: 0, keep: 0 },
      operations: { added: 0, removed: 0, changed: 0 },
      properties: { added: 0, removed: 0, changed: 0, breaking: 0 },
      findings: 1,
    });
    // The line is the warning's own, right above its statement, in the file generate writes.
    expect(charter(["forge", "generate", fresh, "-t", "migrations", "-o", target]).status).toBe(0);
    const sql = readFileSync(join(target, migration), "utf8").split("\n");
    expect(sql[plan.findings[0].line - 1]).toBe(`-- charter: WARNING review: ${message}`);
    expect(sql[plan.findings[0].line]).toMatch(/^ALTER TABLE "customers" ADD COLUMN/);
    // The same plan again (nothing left to do) has no finding; the text form names both places.
    writeFileSync(
      file,
      entity(
        "customer",
        "    name:\n      type: string\n      required: true\n    country:\n      type: string\n      required: true\n    region:\n      type: string\n      required: true\n",
      ),
    );
    const text = charter(["plan", fresh, "-t", "migrations", "-o", target]).stdout;
    expect(text).toMatch(
      /^ {2}backend\/db\/migrations\/0003_add_customers_region\.sql:\d+:1: warning: customers\.region is required without a default; .* \[generate\.review\] \(.*customer\.contract\.yaml:14:5\)$/m,
    );
    expect(text).toMatch(/^1 to add, 1 to change, 0 to remove; 1 warning\(s\)\.$/m);
  });

  it("names a migration by whole words, never cutting a name", () => {
    const fresh = join(work, "long-rename");
    mkdirSync(fresh);
    const file = join(fresh, "customer.contract.yaml");
    writeFileSync(file, entity("customer", "    company_legal_name:\n      type: string\n"));
    const target = join(work, "long-rename-out");
    expect(charter(["forge", "generate", fresh, "-t", "migrations", "-o", target]).status).toBe(0);
    writeFileSync(
      file,
      entity("customer", "    registered_organisation_name:\n      type: string\n      renamed_from: company_legal_name\n"),
    );
    const plan = JSON.parse(charter(["plan", fresh, "-t", "migrations", "-o", target, "--format", "json"]).stdout);
    // `rename_customers_company_legal_name_to_registered_organisation_name` is past 60 characters.
    expect(plan.added[0].path).toBe("backend/db/migrations/0002_rename_customers_company_legal_name.sql");
  });

  it("exits 1 with the findings on broken contracts", () => {
    writeFileSync(join(domain(), "bad.contract.yaml"), entity("Bad", "    x:\n      type: string\n"));
    const r = charter(["plan", domain(), "-o", out()]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("bad.contract.yaml");
  });
});

describe("charter plan: API changes", () => {
  let work: string;
  const domain = (): string => join(work, "domain");
  const out = (): string => join(work, "out");
  const plan = (): {
    status: number | null;
    plan: {
      api: {
        breaking: boolean;
        operationsRemoved: string[];
        changes: { operation: string; id: string; level: string }[];
        counts: { operations: Record<string, number>; properties: { added: number; removed: number; changed: number; breaking: number } };
      };
      summary: { operations: Record<string, number>; properties: Record<string, number> };
    };
  } => {
    const r = charter(["plan", domain(), "-t", "fastapi-prod", "-o", out(), "--format", "json"]);
    expect(r.stderr).toBe("");
    return { status: r.status, plan: JSON.parse(r.stdout) };
  };

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "charter-plan-api-"));
    cpSync(resolve("examples/helpdesk"), domain(), { recursive: true });
    expect(charter(["forge", "generate", domain(), "-t", "fastapi-prod", "-o", out()]).status).toBe(0);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("sees no API change when nothing changed", () => {
    const { status, plan: p } = plan();
    expect(status).toBe(0);
    expect(p.api).toEqual({
      operationsAdded: [],
      operationsRemoved: [],
      changes: [],
      breaking: false,
      counts: { operations: { added: 0, removed: 0, changed: 0 }, properties: { added: 0, removed: 0, changed: 0, breaking: 0 } },
    });
  });

  it("calls a widened field not breaking", () => {
    const file = join(domain(), "entities/customer.contract.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("maxLength: 120", "maxLength: 200"));
    const { status, plan: p } = plan();
    expect(status).toBe(2);
    expect(p.api.breaking).toBe(false);
    expect(p.api.changes).toContainEqual(
      expect.objectContaining({ operation: "POST /customers", id: "request-property-max-length-increased", level: "info" }),
    );
  });

  it("counts operations and property changes, breaking ones apart, in the API header and the summary", () => {
    const file = join(domain(), "entities/customer.contract.yaml");
    const before = readFileSync(file, "utf8");
    // A new required field and an optional one made required: clients must send both, breaking.
    writeFileSync(
      file,
      before.replace(
        "    company:\n      type: string\n",
        "    company:\n      type: string\n      required: true\n    country:\n      type: string\n      required: true\n",
      ),
    );
    try {
      const { plan: p } = plan();
      expect(p.api.breaking).toBe(true);
      const { properties, operations } = p.api.counts;
      expect(properties.added).toBeGreaterThanOrEqual(2);
      expect(properties.changed).toBeGreaterThanOrEqual(1);
      expect(properties.breaking).toBe(p.api.changes.filter((c) => c.level === "error" && c.id.includes("property")).length);
      expect(properties.breaking).toBeGreaterThanOrEqual(1);
      expect(p.api.changes).toContainEqual(expect.objectContaining({ operation: "POST /customers", id: "new-required-request-property" }));
      expect(p.api.changes).toContainEqual(
        expect.objectContaining({ operation: "POST /customers", id: "request-property-became-required" }),
      );
      expect(operations).toEqual({ added: 0, removed: 0, changed: new Set(p.api.changes.map((c) => c.operation)).size });
      expect(p.summary.properties).toEqual(properties);
      const text = charter(["plan", domain(), "-t", "fastapi-prod", "-o", out()]).stdout;
      const changes = properties.added + properties.removed + properties.changed;
      expect(text).toContain(
        `API: 0 operation(s) added, 0 removed, ${operations.changed} changed; ${changes} property change(s): ${properties.added} added, ${properties.removed} removed, ${properties.changed} changed, ${properties.breaking} breaking — BREAKING`,
      );
      expect(text).toMatch(
        new RegExp(
          `to remove; API: 0 operation\\(s\\) added, 0 removed, ${operations.changed} changed; properties: ${properties.added} added, ${properties.removed} removed, ${properties.changed} changed, ${properties.breaking} breaking`,
        ),
      );
    } finally {
      writeFileSync(file, before);
    }
  });

  it("still plans the files when no Python can build the OpenAPI document, and says why the API was not compared", () => {
    const r = charter(["plan", domain(), "-t", "fastapi-prod", "-o", out(), "--format", "json"], { CHARTER_PYTHON: "/nonexistent/python" });
    expect(r.status).toBe(2);
    const p = JSON.parse(r.stdout);
    expect(p.api).toBeNull();
    expect(p.apiError).toContain("could not build the OpenAPI document");
  });

  it("calls a removed endpoint breaking", () => {
    rmSync(join(domain(), "routes/agent_api.contract.yaml"));
    rmSync(join(domain(), "pages/agents.contract.yaml"));
    const { status, plan: p } = plan();
    expect(status).toBe(2);
    expect(p.api.breaking).toBe(true);
    expect(p.api.operationsRemoved).toContain("POST /agents");
    expect(p.api.changes).toContainEqual(
      expect.objectContaining({ operation: "GET /agents", id: "api-removed-without-deprecation", level: "error" }),
    );
  });
});
