import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCharter } from "../support/cli.js";
import { freshDatabase, psql } from "../support/postgres.js";
import { validates } from "./support.js";

const FIX = resolve("test/fixtures/importers");
const work = mkdtempSync(join(tmpdir(), "charter-factory-"));
let n = 0;
const outDir = (): string => join(work, `out-${n++}`);

function migrate(file: string, args: string[] = []): { dir: string; status: number; stdout: string; stderr: string } {
  const dir = outDir();
  const r = runCharter(["factory", "migrate", join(FIX, file), "--domain", "shop", "--output", dir, ...args]);
  return { dir, ...r };
}

function contract(dir: string, rel: string): Record<string, unknown> {
  return parse(readFileSync(join(dir, rel), "utf8")) as Record<string, unknown>;
}

function fields(dir: string, entity: string): Record<string, Record<string, unknown>> {
  const spec = contract(dir, `entities/${entity}.contract.yaml`).spec as { fields: Record<string, Record<string, unknown>> };
  return spec.fields;
}

function applyPostgres(dir: string, name: string): string {
  const out = outDir();
  const g = runCharter(["forge", "generate", dir, "--target", "postgres", "--output", out]);
  expect(g.status, g.stderr).toBe(0);
  const db = freshDatabase(name);
  const sql = readFileSync(join(out, "backend/db/schema.sql"), "utf8");
  psql(db, sql);
  psql(db, sql); // idempotent, as the app re-applies it on every start
  return db;
}

describe("factory migrate --from sql", () => {
  it("reads a PostgreSQL schema: types, NOT NULL, defaults, CHECK enums and bounds, foreign keys; applies to PostgreSQL", () => {
    const r = migrate("sql/shop-postgres.sql");
    expect(r.status, r.stderr).toBe(0);
    validates(r.dir);
    const customer = fields(r.dir, "customer");
    expect(customer.email).toEqual({ type: "string", required: true, constraints: { maxLength: 200 } });
    expect(customer.tier).toEqual({ type: "text", default: "basic", enum: ["basic", "gold"] });
    expect(contract(r.dir, "entities/customer.contract.yaml").spec).toMatchObject({ mixins: ["mixin/stdlib/timestamped"] });
    const product = fields(r.dir, "product");
    expect(product.stock).toEqual({ type: "integer", default: 0, constraints: { min: 0, max: 100000 } });
    const order = fields(r.dir, "order");
    expect(order.customer_id).toEqual({
      type: "uuid",
      required: true,
      references: { entity: "entity/shop/customer", display: "full_name", on_delete: "cascade" },
    });
    expect(order.status).toBeUndefined();
    const wf = contract(r.dir, "workflows/order_lifecycle.contract.yaml").spec as Record<string, unknown>;
    expect(wf.initial).toBe("new");
    expect(Object.keys(wf.states as object)).toEqual(["new", "paid", "shipped", "cancelled"]);
    // A join table with a composite key stays an entity with two references.
    const item = fields(r.dir, "order_item");
    expect(item.order_id?.references).toEqual({ entity: "entity/shop/order" });
    expect(r.stdout).toContain("many-to-many join table between order and product");
    // The mutual reference customer <-> address is broken, and said so.
    expect(fields(r.dir, "customer").default_address_id).toEqual({ type: "uuid" });
    expect(r.stdout).toMatch(/customer\.default_address_id: reference to address dropped to break a dependency cycle/);
    expect(r.stdout).toMatch(
      /index idx_orders_customer_status on orders \(customer_id, status\): composite index .* \[.*shop-postgres\.sql:33:\d+\]/,
    );
    expect(r.stdout).toMatch(/CREATE FUNCTION \(1 statement\): not part of the data model/);
    const db = applyPostgres(r.dir, "i13_factory_pg");
    const cols = psql(
      db,
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'customers' ORDER BY column_name;",
      ["-At"],
    );
    expect(cols).toContain("email|text");
    expect(cols).toContain("default_address_id|uuid");
    // The imported rules hold in the database: the CHECK enum, the length, the foreign key.
    psql(db, "INSERT INTO customers (email, full_name, tier) VALUES ('ada@example.com', 'Ada', 'gold');");
    expect(() => psql(db, "INSERT INTO customers (email, full_name, tier) VALUES ('bob@example.com', 'Bob', 'platinum');")).toThrow(
      /check constraint/,
    );
    expect(() => psql(db, `INSERT INTO customers (email, full_name) VALUES ('${"x".repeat(201)}', 'Long');`)).toThrow(/check constraint/);
    expect(() => psql(db, "INSERT INTO orders (customer_id) VALUES (gen_random_uuid());")).toThrow(/foreign key/);
  });

  it("reads the MySQL flavour (backquotes, AUTO_INCREMENT, ENUM columns, KEY) and applies to PostgreSQL", () => {
    const r = migrate("sql/shop-mysql.sql");
    expect(r.status, r.stderr).toBe(0);
    validates(r.dir);
    const customer = fields(r.dir, "customer");
    expect(customer.tier).toEqual({ type: "string", default: "basic", enum: ["basic", "gold"] });
    expect(customer.active).toEqual({ type: "boolean", default: true });
    expect(fields(r.dir, "product").stock).toEqual({ type: "integer", default: 0, constraints: { min: 0 } });
    expect(fields(r.dir, "order_item").product_id?.references).toMatchObject({ entity: "entity/shop/product", display: "name" });
    expect(existsSync(join(r.dir, "workflows/order_lifecycle.contract.yaml"))).toBe(true);
    expect(r.stdout).toMatch(/index idx_customer_status on orders \(customer_id, status\): composite index/);
    applyPostgres(r.dir, "i13_factory_mysql");
  });

  it("reads a directory of migrations in order (added columns, a dropped table)", () => {
    const r = migrate("sql/migrations");
    expect(r.status, r.stderr).toBe(0);
    const book = fields(r.dir, "book");
    expect(book.isbn).toEqual({ type: "string", constraints: { maxLength: 17 } });
    expect(book.pages).toEqual({ type: "integer", constraints: { min: 1, max: 5000 } });
    expect(existsSync(join(r.dir, "entities/draft.contract.yaml"))).toBe(false);
    expect(r.stdout).toMatch(/Read 3 files/);
  });

  it("imports a 24-table pg_dump (functions, sequences, COPY data, grants) that validates and applies to PostgreSQL", () => {
    const r = migrate("sql/saas-dump.sql", ["--routes", "--pages", "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { entities: string[]; workflows: string[]; routes: string[]; notes: { subject: string }[] };
    expect(summary.entities).toHaveLength(24);
    expect(summary.workflows).toEqual(["invoice_lifecycle", "issue_lifecycle", "project_lifecycle", "sprint_lifecycle"]);
    expect(summary.routes).toHaveLength(24);
    expect(summary.notes.map((x) => x.subject)).toContain("CREATE FUNCTION (1 statement)");
    validates(r.dir);
    const issue = fields(r.dir, "issue");
    expect(issue.parent_id?.references).toMatchObject({ entity: "entity/shop/issue" });
    expect(issue.priority).toEqual({ type: "integer", default: 3, constraints: { min: 1, max: 5 } });
    expect(issue.estimate_hours?.description).toBe("Planned effort in hours");
    expect(fields(r.dir, "user").role).toEqual({ type: "string", default: "member", enum: ["owner", "admin", "member", "guest"] });
    const db = applyPostgres(r.dir, "i13_factory_dump");
    const tables = psql(
      db,
      "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name NOT IN ('events', 'auth_users');",
      ["-At"],
    );
    expect(Number(tables.trim())).toBeGreaterThanOrEqual(24);
  });

  it("refuses a CREATE TABLE it cannot parse, naming file, line and column, and writes nothing", () => {
    const r = migrate("sql/unsupported.sql");
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/unsupported\.sql:4:22: unsupported SQL \(postgres grammar\): syntax error at or near "WIBBLE"/);
    expect(existsSync(r.dir)).toBe(false);
  });
});

describe("factory migrate (OpenAPI)", () => {
  it("turns nested $refs, allOf, enums, required lists, formats and arrays into contracts and routes", () => {
    const r = migrate("openapi/library.yaml");
    expect(r.status, r.stderr).toBe(0);
    validates(r.dir);
    const book = fields(r.dir, "book");
    expect(book.title).toEqual({ type: "string", required: true, constraints: { minLength: 1, maxLength: 200 } });
    expect(book.genre).toEqual({ type: "string", enum: ["fiction", "science", "history"] });
    expect(book.pages).toEqual({ type: "integer", constraints: { min: 1, max: 5000 } });
    expect(book.published).toEqual({ type: "date" });
    expect(book.keywords).toEqual({ type: "array", items_type: "string" });
    expect(book.in_print).toEqual({ type: "boolean", default: true });
    expect(book.author_id).toMatchObject({ type: "uuid", required: true, references: { entity: "entity/shop/author", display: "name" } });
    expect(fields(r.dir, "member").email).toEqual({ type: "email", required: true });
    expect(fields(r.dir, "author").website).toEqual({ type: "string", format: "uri" });
    expect(existsSync(join(r.dir, "entities/book_base.contract.yaml"))).toBe(false);
    expect(existsSync(join(r.dir, "entities/error.contract.yaml"))).toBe(false);
    const route = contract(r.dir, "routes/book_api.contract.yaml").spec as {
      base_path?: string;
      endpoints: { method: string; path: string }[];
    };
    expect(route.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "POST /", "GET /{id}", "PATCH /{id}", "DELETE /{id}"]);
    expect(r.stdout).toMatch(/PUT \/books\/\{bookId\}\/cover: not one of the standard operations of \/books .*library\.yaml:42:7/);
  });

  it("reads Swagger 2.0 (definitions, body parameters)", () => {
    const r = migrate("openapi/library-swagger2.json");
    expect(r.status, r.stderr).toBe(0);
    validates(r.dir);
    expect(fields(r.dir, "author")).toEqual({
      name: { type: "string", required: true, constraints: { maxLength: 120 } },
      email: { type: "email", required: true },
      born: { type: "date" },
      country: { type: "string", enum: ["fr", "de", "uk"] },
    });
    const route = contract(r.dir, "routes/author_api.contract.yaml").spec as { endpoints: { method: string; path: string }[] };
    expect(route.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "POST /", "GET /{id}", "DELETE /{id}"]);
  });

  it.each([
    ["public/petstore-openapi3.yaml", "OpenAPI 3.0"],
    ["public/petstore-swagger2.yaml", "Swagger 2.0"],
  ])("imports the real Swagger Petstore spec (%s, %s)", (file) => {
    const r = migrate(`openapi/${file}`);
    expect(r.status, r.stderr).toBe(0);
    validates(r.dir);
    for (const e of ["pet", "category", "tag", "order", "user"]) expect(existsSync(join(r.dir, `entities/${e}.contract.yaml`))).toBe(true);
    expect(fields(r.dir, "pet").category_id?.references).toMatchObject({ entity: "entity/shop/category" });
    expect((contract(r.dir, "routes/pet_api.contract.yaml").spec as { base_path: string }).base_path).toBe("/pet");
    expect(r.stdout).toMatch(/GET \/pet\/findByStatus: not one of the standard operations of \/pet/);
  });

  it("imports the real ReadMe API spec (OpenAPI 3.1, inline schemas in data envelopes)", () => {
    const r = migrate("openapi/public/readme-api.yaml", ["--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as {
      entities: string[];
      routes: string[];
      notes: { kind: string; subject: string; reason: string }[];
    };
    expect(summary.entities).toEqual(expect.arrayContaining(["changelog", "custom_page", "guide", "image", "recipe"]));
    expect(summary.entities.length).toBeGreaterThanOrEqual(10);
    expect(summary.routes).toContain("changelog_api");
    expect(summary.notes).toContainEqual(
      expect.objectContaining({ subject: "changelogs", reason: expect.stringContaining("inferred from the inline schemas") }),
    );
    validates(r.dir);
    expect(fields(r.dir, "changelog").title).toEqual({ type: "string", required: true });
  });

  it.each([
    ["openapi/malformed.yaml", /malformed\.yaml:7:1: malformed spec: /],
    ["openapi/invalid.yaml", /invalid\.yaml:2:7 \(at #\/info\): invalid spec: must have required property 'version'/],
    ["openapi/circular.yaml", /circular\.yaml:\d+:\d+ \(at #\/components\/schemas\/\w+\): circular \$ref: .* never reaches a schema/],
    ["openapi/missing.yaml", /missing\.yaml: cannot read: no such file/],
  ])("refuses %s with a located error and writes nothing", (file, message) => {
    const r = migrate(file);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(existsSync(r.dir)).toBe(false);
  });

  it("refuses a file that is not UTF-8", () => {
    const bad = join(work, "latin1.yaml");
    writeFileSync(bad, Buffer.from([0x6f, 0x70, 0x65, 0x6e, 0x61, 0x70, 0x69, 0x3a, 0x20, 0xe9, 0x0a]));
    const r = runCharter(["factory", "migrate", bad, "--domain", "shop", "--output", outDir()]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/latin1\.yaml: not UTF-8 text/);
  });

  it("refuses to overwrite existing contracts unless --force, writing nothing", () => {
    const dir = outDir();
    mkdirSync(join(dir, "entities"), { recursive: true });
    writeFileSync(join(dir, "entities/author.contract.yaml"), "# mine\n");
    const r = runCharter(["factory", "migrate", join(FIX, "openapi/library-swagger2.json"), "--domain", "shop", "--output", dir]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/1 contract file\(s\) already exist .*nothing was written. Use --force/);
    expect(readFileSync(join(dir, "entities/author.contract.yaml"), "utf8")).toBe("# mine\n");
    expect(existsSync(join(dir, "routes"))).toBe(false);
    const forced = runCharter([
      "factory",
      "migrate",
      join(FIX, "openapi/library-swagger2.json"),
      "--domain",
      "shop",
      "--output",
      dir,
      "--force",
    ]);
    expect(forced.status, forced.stderr).toBe(0);
    expect(readFileSync(join(dir, "entities/author.contract.yaml"), "utf8")).toContain("kind: Entity");
  });

  it("gives the same bytes for the same input", () => {
    const a = migrate("openapi/library.yaml");
    const b = migrate("openapi/library.yaml");
    for (const f of ["entities/book.contract.yaml", "routes/book_api.contract.yaml", "workflows/member_lifecycle.contract.yaml"]) {
      expect(readFileSync(join(a.dir, f), "utf8")).toBe(readFileSync(join(b.dir, f), "utf8"));
    }
  });
});

describe("factory migrate (Prisma)", () => {
  it("reads models, relations, enums, @default, @unique, @updatedAt, @map and @@map", () => {
    const r = migrate("prisma/schema.prisma");
    expect(r.status, r.stderr).toBe(0);
    validates(r.dir);
    const user = fields(r.dir, "user");
    expect(user.role).toEqual({ type: "string", default: "reader", enum: ["reader", "editor", "admin"] });
    expect(user.email).toEqual({ type: "string", required: true });
    expect(r.stdout).toContain("user.email: unique constraint is not expressible");
    expect(contract(r.dir, "entities/user.contract.yaml").spec).toEqual(expect.objectContaining({ mixins: ["mixin/stdlib/timestamped"] }));
    const post = fields(r.dir, "post");
    expect(post.author_id).toEqual({ type: "uuid", required: true, references: { entity: "entity/shop/user", display: "name" } });
    expect(post.parent_id).toEqual({ type: "uuid", references: { entity: "entity/shop/post", display: "title" } });
    expect(post.views).toEqual({ type: "integer", default: 0 });
    expect(contract(r.dir, "entities/post.contract.yaml").spec).toMatchObject({
      mixins: ["mixin/stdlib/taggable"],
      state_machine: "workflow/shop/post_lifecycle",
    });
    expect(r.stdout).toMatch(/@@index\(\[authorId, status\]\) on Post: composite index/);
  });

  it("refuses a broken schema with its line and column", () => {
    const bad = join(work, "broken.prisma");
    writeFileSync(bad, "model X {\n  id Int @id\n  name String ??\n}\n");
    const dir = outDir();
    const r = runCharter(["factory", "migrate", bad, "--domain", "shop", "--output", dir]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/broken\.prisma:3:\d+: invalid Prisma schema/);
    expect(existsSync(dir)).toBe(false);
  });
});
