import { describe, expect, it } from "vitest";
import { convertModel } from "../../src/importers/convert.js";
import { splitStatements } from "../../src/importers/factory/sql-statements.js";
import type { ImportModel, ImportTable } from "../../src/importers/model.js";
import { entityName, singularize, snakeCase, uniqueNames } from "../../src/importers/naming.js";
import { breakCycles, pickDisplay } from "../../src/importers/relations.js";
import { inferWorkflow } from "../../src/importers/workflows.js";

describe("naming", () => {
  it.each([
    ["OrderItem", "order_item"],
    ["orderItem", "order_item"],
    ["order-item", "order_item"],
    ["ORDER_ITEM", "order_item"],
    ["HTTPRequestLog", "http_request_log"],
    ["2fa codes", "n_2fa_codes"],
    ["  Émile ", "mile"],
  ])("snake_case(%s) = %s", (raw, snake) => {
    expect(snakeCase(raw)).toBe(snake);
  });

  it.each([
    ["order_items", "order_item"],
    ["categories", "category"],
    ["addresses", "address"],
    ["statuses", "status"],
    ["status", "status"],
    ["people", "person"],
    ["boxes", "box"],
    ["news", "news"],
  ])("singular of %s is %s", (plural, singular) => {
    expect(singularize(plural)).toBe(singular);
  });

  it("never merges names that collide after normalisation", () => {
    const { names, collisions } = uniqueNames(["userName", "user_name", "UserName"], snakeCase);
    expect([...names.values()]).toEqual(["user_name", "user_name_2", "user_name_3"]);
    expect(collisions).toEqual([
      { raw: "user_name", name: "user_name_2", clashesWith: "userName" },
      { raw: "UserName", name: "user_name_3", clashesWith: "userName" },
    ]);
    expect(entityName("OrderItems")).toBe("order_item");
  });
});

describe("splitting SQL into statements", () => {
  it("keeps semicolons inside strings, quoted names, comments and dollar-quoted bodies", () => {
    const sql = [
      "-- a comment; with a semicolon",
      "CREATE TABLE \"a;b\" (x text DEFAULT 'it''s; fine');",
      "/* block; comment */ CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql;",
      "COPY t (x) FROM stdin;",
      "row; with; semicolons",
      "\\.",
      "SELECT 1",
    ].join("\n");
    const stmts = splitStatements(sql, "postgres");
    expect(stmts.map((s) => s.text.split("\n")[0])).toEqual([
      "CREATE TABLE \"a;b\" (x text DEFAULT 'it''s; fine')",
      "CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql",
      "COPY t (x) FROM stdin",
      "SELECT 1",
    ]);
    expect(stmts.map((s) => [s.line, s.column])).toEqual([
      [2, 1],
      [3, 22],
      [4, 1],
      [7, 1],
    ]);
  });

  it("knows MySQL's backslash escapes and PostgreSQL's literal backslashes", () => {
    expect(splitStatements("INSERT INTO t VALUES ('a\\';b'); SELECT 2;", "mysql")).toHaveLength(2);
    expect(splitStatements("SELECT 'C:\\'; SELECT 2;", "postgres")).toHaveLength(2);
  });
});

describe("relations", () => {
  it("breaks each dependency cycle at an optional reference first, and keeps self-references", () => {
    const dropped = breakCycles(
      ["address", "customer", "employee"],
      [
        { from: "address", field: "customer_id", to: "customer", required: true },
        { from: "customer", field: "default_address_id", to: "address", required: false },
        { from: "employee", field: "manager_id", to: "employee", required: false },
      ],
    );
    expect(dropped).toEqual([{ from: "customer", field: "default_address_id", to: "address", required: false }]);
  });

  it("picks a readable display field", () => {
    expect(
      pickDisplay([
        { name: "code", type: "string" },
        { name: "title", type: "string" },
      ]),
    ).toBe("title");
    expect(
      pickDisplay([
        { name: "amount", type: "number" },
        { name: "label_text", type: "string", required: true },
      ]),
    ).toBe("label_text");
    expect(pickDisplay([{ name: "amount", type: "number" }])).toBeUndefined();
  });
});

describe("workflows from status enums", () => {
  it("is confident with a status field, snake_case values and a default", () => {
    const wf = inferWorkflow("order", new Map([["status", { type: "string", enum: ["new", "paid", "cancelled"], default: "new" }]]));
    expect(wf?.spec).toEqual({
      initial: "new",
      states: {
        new: { label: "New", category: "open" },
        paid: { label: "Paid", category: "open" },
        cancelled: { label: "Cancelled", category: "closed", terminal: true },
      },
      transitions: { new: ["paid", "cancelled"], paid: ["new", "cancelled"], cancelled: [] },
    });
  });

  it.each([
    ["no default", { type: "string", enum: ["a", "b"] }],
    ["values that are not names", { type: "string", enum: ["In Progress", "Done"], default: "Done" }],
    ["a single value", { type: "string", enum: ["only"], default: "only" }],
  ])("is not confident with %s", (_why, def) => {
    expect(inferWorkflow("x", new Map([["status", def]]))).toBeUndefined();
  });
});

describe("convertModel", () => {
  const table = (t: Partial<ImportTable> & { name: string }): ImportTable => ({
    fields: [],
    primaryKey: [],
    foreignKeys: [],
    location: { file: "schema.sql", line: 1 },
    ...t,
  });
  const model = (tables: ImportTable[]): ImportModel => ({ format: "sql", files: ["schema.sql"], tables, operations: [], notes: [] });
  const options = { domain: "d", routes: "none" as const, pages: false, workflows: true };

  it("reports composite keys, composite foreign keys, missing targets and renamed reserved names, dropping nothing silently", () => {
    const result = convertModel(
      model([
        table({
          name: "shipments",
          fields: [
            { name: "carrier", type: "string", required: true },
            { name: "code", type: "string", required: true },
            { name: "state", type: "string" },
            { name: "status", type: "string", enum: ["open", "closed"], default: "open" },
            { name: "region_id", type: "integer" },
          ],
          primaryKey: ["carrier", "code"],
        }),
        table({
          name: "parcels",
          fields: [
            { name: "carrier", type: "string" },
            { name: "code", type: "string" },
            { name: "weight", type: "number" },
          ],
          foreignKeys: [{ columns: ["carrier", "code"], table: "shipments", targetColumns: ["carrier", "code"] }],
        }),
        table({
          name: "labels",
          fields: [{ name: "region_id", type: "integer" }],
          foreignKeys: [{ columns: ["region_id"], table: "regions", targetColumns: ["id"] }],
        }),
      ]),
      options,
    );
    const reasons = result.notes.map((n) => `${n.subject}: ${n.reason}`);
    expect(reasons).toContainEqual(expect.stringMatching(/^shipment: composite primary key \(carrier, code\) is not expressible/));
    expect(reasons).toContainEqual(
      expect.stringMatching(/^parcel\.\(carrier, code\): composite foreign key to shipment cannot be a contract reference/),
    );
    expect(reasons).toContain("shipment.state: 'state' is the workflow's; the column is named 'state_value'");
    expect(reasons).toContainEqual(
      expect.stringMatching(/^label\.region_id: references 'regions', which is not in the input; kept as a plain field/),
    );
    const shipment = result.contracts.find((c) => c.name === "shipment" && c.kind === "Entity");
    expect(shipment).toBeDefined();
    const fields = ((shipment?.data.spec ?? {}) as { fields: Record<string, unknown> }).fields;
    expect(Object.keys(fields)).toEqual(["carrier", "code", "region_id", "state_value"]);
  });

  it("names colliding tables apart and says so", () => {
    const result = convertModel(
      model([
        table({ name: "Person", fields: [{ name: "name", type: "string" }] }),
        table({ name: "people", fields: [{ name: "nick", type: "string" }] }),
      ]),
      options,
    );
    expect(result.contracts.map((c) => c.name)).toEqual(["person", "person_2"]);
    expect(result.notes).toContainEqual(
      expect.objectContaining({ subject: "people", reason: "name collides with 'Person' after normalisation; entity named 'person_2'" }),
    );
  });

  it("gives every entity with a Page a Route, moving a source path the generated app serves itself aside", () => {
    const ops = (path: string) => [
      { method: "GET", path, table: "metrics", location: { file: "app.py", line: 3 } },
      { method: "POST", path, table: "metrics", location: { file: "app.py", line: 9 } },
    ];
    const tables = [
      table({ name: "metrics", fields: [{ name: "label", type: "string" }] }),
      table({ name: "notes", fields: [{ name: "body", type: "string" }] }),
    ];
    const result = convertModel(
      { ...model(tables), operations: ops("/health") },
      { ...options, routes: "operations" as const, pages: true },
    );
    const routes = result.contracts
      .filter((c) => c.kind === "Route")
      .map((c) => [c.entity, (c.data.spec as { base_path?: string }).base_path]);
    // The metric's source path is /health; its default /metrics is the app's too: /api/metrics.
    expect(routes).toEqual([
      ["metric", "/api/metrics"],
      ["note", undefined],
    ]);
    expect(result.notes).toContainEqual(
      expect.objectContaining({ subject: "metric base path /health", reason: expect.stringContaining("the Route uses /api/metrics") }),
    );
  });
});
