import { describe, expect, it } from "vitest";
import { checkFiles, entityYaml, messages } from "../support/domain.js";

const wf = (spec: string, extra = "") =>
  `apiVersion: charter/v1\nkind: Workflow\nmetadata: {name: flow, domain: shop}\n${extra}spec:\n${spec}`;
const baseFlow = `  initial: open
  states:
    open: {label: Open, category: open}
    done: {label: Done, category: closed, terminal: true}
  transitions:
    open: [done]
    done: []
`;
const order = (fields = "    title: {type: string}\n    total: {type: number}\n") =>
  entityYaml("order", fields, "  state_machine: workflow/shop/flow\n");
const route = (spec: string) => `apiVersion: charter/v1\nkind: Route\nmetadata: {name: order_api, domain: shop}\nspec:\n${spec}`;
const page = (spec: string) => `apiVersion: charter/v1\nkind: Page\nmetadata: {name: orders, domain: shop}\nspec:\n${spec}`;

describe("semantic checks", () => {
  it("accept a consistent domain and compile it", () => {
    const r = checkFiles({ "order.contract.yaml": order(), "flow.contract.yaml": wf(baseFlow) });
    expect(r.findings).toEqual([]);
    expect(r.ir?.summary).toMatchObject({ entities: 1, workflows: 1 });
  });

  it("find duplicate names within kind and domain, but allow the same name in another kind", () => {
    const r = checkFiles({
      "a.contract.yaml": entityYaml("order"),
      "b.contract.yaml": entityYaml("order"),
      "c.contract.yaml": wf(baseFlow).replace("name: flow", "name: order"),
    });
    expect(messages(r)).toEqual([expect.stringMatching(/^duplicate contract 'entity\/shop\/order': also defined in .*a\.contract\.yaml$/)]);
    expect(r.findings[0]).toMatchObject({ line: 4, column: 9, path: "/metadata/name" });
  });

  it("resolve every requires FQN", () => {
    const r = checkFiles({ "a.contract.yaml": entityYaml("order").replace("spec:", "requires: [entity/shop/customer]\nspec:") });
    expect(messages(r)).toEqual(["unresolved reference 'entity/shop/customer'"]);
    expect(r.findings[0]).toMatchObject({ path: "/requires/0", line: 6, column: 12 });
  });

  it("resolve every derived reference: fields, mixins, state machine, route, page, agent, side effects", () => {
    const r = checkFiles({
      "e.contract.yaml": entityYaml(
        "order",
        "    c:\n      type: uuid\n      references: {entity: entity/shop/customer}\n",
        "  mixins: [mixin/stdlib/timestamped, mixin/shop/audited]\n  state_machine: workflow/shop/gone\n",
      ),
      "r.contract.yaml": route(
        "  entity: entity/shop/nothing\n  endpoints:\n    - method: POST\n      path: /nothings\n      side_effects:\n        - invoke: agent/shop/missing\n",
      ),
      "p.contract.yaml": page("  route: /x\n  entity: entity/shop/ghost\n  generation_tier: mechanical\n"),
      "a.contract.yaml":
        "apiVersion: charter/v1\nkind: Agent\nmetadata: {name: bot, domain: shop}\nspec:\n  trigger: t\n  input: {entity: entity/shop/phantom}\n  output: {updates: [x]}\n",
    });
    expect(
      messages(r)
        .filter((m) => m.startsWith("unresolved"))
        .sort(),
    ).toEqual(
      [
        "unresolved reference 'agent/shop/missing'",
        "unresolved reference 'entity/shop/customer'",
        "unresolved reference 'entity/shop/ghost'",
        "unresolved reference 'entity/shop/nothing'",
        "unresolved reference 'entity/shop/phantom'",
        "unresolved reference 'mixin/shop/audited'",
        "unresolved reference 'workflow/shop/gone'",
      ].sort(),
    );
  });

  it("refuse a reference to a contract of the wrong kind", () => {
    const r = checkFiles({
      "o.contract.yaml": order().replace("workflow/shop/flow", "entity/shop/order"),
      "f.contract.yaml": wf(baseFlow),
    });
    expect(messages(r)).toContain("'entity/shop/order' is not one of the Workflow contracts");
  });

  it("report dependency cycles once, in a stable order, at the edge that closes them", () => {
    const r = checkFiles({
      "x.contract.yaml": entityYaml("x", "    y_id:\n      type: uuid\n      references: {entity: entity/shop/y}\n"),
      "y.contract.yaml": entityYaml("y", "    z_id:\n      type: uuid\n      references: {entity: entity/shop/z}\n"),
      "z.contract.yaml": entityYaml("z", "    x_id:\n      type: uuid\n      references: {entity: entity/shop/x}\n"),
    });
    expect(messages(r)).toEqual(["dependency cycle: entity/shop/x -> entity/shop/y -> entity/shop/z -> entity/shop/x"]);
    expect(r.findings[0]).toMatchObject({ path: "/spec/fields/y_id/references/entity" });
    expect(r.ir).toBeNull();
  });

  it("allow an entity to reference itself", () => {
    const r = checkFiles({
      "e.contract.yaml": entityYaml(
        "employee",
        "    manager_id:\n      type: uuid\n      references: {entity: entity/shop/employee, display: name}\n    name: {type: string}\n",
      ),
    });
    expect(r.findings).toEqual([]);
  });

  it("check workflow consistency: initial, transition states, terminal moves, guards and side effects", () => {
    const r = checkFiles({
      "o.contract.yaml": order(),
      "f.contract.yaml": wf(`  initial: draft
  states:
    open: {label: Open}
    done: {label: Done, terminal: true}
  transitions:
    open: [done, lost]
    done: [open]
    limbo: [open]
  guards:
    "open -> done":
      require_fields: [total, missing_field]
      condition: "total > 0 and colour == 'red'"
    "done -> gone": {require_fields: [total]}
  side_effects:
    "open -> done":
      - set: {nowhere: 1}
`),
    });
    expect(messages(r).sort()).toEqual(
      [
        "'draft' is not one of ['open', 'done']",
        "'lost' is not one of ['open', 'done']",
        "'limbo' is not one of ['open', 'done']",
        'terminal state "done" must have no outgoing transitions',
        "'done -> gone' is not one of ['open -> done', 'done -> open']",
        "'missing_field' is not one of ['id', 'title', 'total', 'created_at', 'updated_at', 'state']",
        "'colour' is not one of ['id', 'title', 'total', 'created_at', 'updated_at', 'state']",
        "'nowhere' is not one of ['id', 'title', 'total', 'created_at', 'updated_at', 'state']",
      ].sort(),
    );
  });

  it("parse expressions in guard conditions and validation rules, locating syntax errors", () => {
    const r = checkFiles({
      "o.contract.yaml": order(),
      "f.contract.yaml": wf(baseFlow.replace("    done: []\n", '    done: []\n  guards:\n    "open -> done": {condition: "total >"}\n')),
      "r.contract.yaml": route(
        '  entity: entity/shop/order\n  endpoints:\n    - method: POST\n      path: /orders\n      validation:\n        - rule: "total = 1"\n          on_fail: {status: 422, error: validation_error}\n',
      ),
    });
    expect(messages(r).sort()).toEqual([
      "invalid expression \"total = 1\": unexpected character '=' at offset 6",
      'invalid expression "total >": unexpected end of expression at offset 7',
    ]);
    expect(r.findings.find((f) => f.message.includes("total = 1"))).toMatchObject({
      path: "/spec/endpoints/0/validation/0/rule",
      line: 10,
    });
  });

  it("check that page columns, card fields and filters are fields of the entity", () => {
    const r = checkFiles({
      "o.contract.yaml": order(),
      "f.contract.yaml": wf(baseFlow),
      "r.contract.yaml": route("  entity: entity/shop/order\n  endpoints: [{method: GET, path: /}]\n"),
      "p.contract.yaml": page(
        "  route: /orders\n  entity: entity/shop/order\n  generation_tier: mechanical\n  views:\n    - {type: table, columns: [title, price]}\n    - {type: kanban, card_fields: [title, colour]}\n  filters: [size]\n",
      ),
    });
    expect(
      messages(r)
        .map((m) => m.split(" is not")[0])
        .sort(),
    ).toEqual(["'colour'", "'price'", "'size'"]);
  });

  it("refuse a kanban view on an entity without a workflow", () => {
    const r = checkFiles({
      "o.contract.yaml": entityYaml("order"),
      "r.contract.yaml": route("  entity: entity/shop/order\n  endpoints: [{method: GET, path: /}]\n"),
      "p.contract.yaml": page("  route: /orders\n  entity: entity/shop/order\n  generation_tier: mechanical\n  views: [{type: kanban}]\n"),
    });
    expect(messages(r)).toEqual(["a kanban view needs an entity with a state_machine; entity/shop/order has none"]);
  });

  it("state in the IR what each entity's Route serves, at the methods and paths the backend answers on", () => {
    const r = checkFiles({
      "o.contract.yaml": order(),
      "f.contract.yaml": wf(baseFlow),
      "c.contract.yaml": entityYaml("customer", "    name: {type: string}\n"),
      // A declared update by PUT is still served as PATCH; the base path is the Route's.
      "r.contract.yaml": route(
        '  entity: entity/shop/order\n  base_path: /shop/orders\n  endpoints:\n    - {method: PUT, path: "/shop/orders/{id}"}\n',
      ),
    });
    expect(r.findings).toEqual([]);
    const entity = (name: string) => r.ir?.entities.find((e) => e.name === name);
    expect(entity("order")?.api).toEqual({
      route: "route/shop/order_api",
      basePath: "/shop/orders",
      operations: [
        { operation: "list", method: "GET", path: "/shop/orders" },
        { operation: "get", method: "GET", path: "/shop/orders/{id}" },
        { operation: "create", method: "POST", path: "/shop/orders" },
        { operation: "update", method: "PATCH", path: "/shop/orders/{id}" },
        { operation: "delete", method: "DELETE", path: "/shop/orders/{id}" },
        { operation: "transition", method: "PUT", path: "/shop/orders/{id}/state" },
      ],
      agentRuns: null,
    });
    // No Route: the backend serves nothing for the entity, and the IR says so.
    expect(entity("customer")?.api).toBeNull();
  });

  it("add the agent runs path to the API of an entity an agent changes", () => {
    const agent =
      "apiVersion: charter/v1\nkind: Agent\nmetadata: {name: bot, domain: shop}\nspec:\n  trigger: order_created\n  input: {entity: entity/shop/order, fields: [title]}\n  output: {updates: [title]}\n";
    const r = checkFiles({
      "o.contract.yaml": entityYaml("order", "    title: {type: string}\n"),
      "r.contract.yaml": route(
        "  entity: entity/shop/order\n  endpoints:\n    - {method: POST, path: /orders, side_effects: [{emit_event: order_created}]}\n",
      ),
      "a.contract.yaml": agent,
    });
    expect(r.findings).toEqual([]);
    expect(r.ir?.entities[0]?.api?.agentRuns).toBe("/orders/{id}/agent-runs");
  });

  it("refuse a Page on an entity no Route serves, at the page's entity", () => {
    const r = checkFiles({
      "o.contract.yaml": order(),
      "f.contract.yaml": wf(baseFlow),
      "p.contract.yaml": page("  route: /orders\n  entity: entity/shop/order\n  generation_tier: mechanical\n  views: [{type: kanban}]\n"),
    });
    expect(r.ir).toBeNull();
    expect(r.findings).toEqual([
      expect.objectContaining({
        code: "page.no_route",
        path: "/spec/entity",
        line: 6,
        column: 11,
        message:
          "no Route serves entity/shop/order, and the page needs its list, get, create, update, delete, transition operations: add a Route contract with entity: entity/shop/order",
      }),
    ]);
    expect(r.findings[0]?.file).toMatch(/p\.contract\.yaml$/);
  });

  it("refuse a second Route on one entity, at its entity", () => {
    const r = checkFiles({
      "o.contract.yaml": entityYaml("order"),
      "r.contract.yaml": route("  entity: entity/shop/order\n  endpoints: [{method: GET, path: /}]\n"),
      "s.contract.yaml": route("  entity: entity/shop/order\n  base_path: /orders-too\n  endpoints: [{method: GET, path: /}]\n").replace(
        "order_api",
        "order_api_2",
      ),
    });
    expect(r.findings).toEqual([
      expect.objectContaining({
        code: "route.duplicate_entity",
        path: "/spec/entity",
        message: "entity/shop/order is already served by route/shop/order_api; an entity has one Route (merge the endpoints into it)",
      }),
    ]);
    expect(r.findings[0]?.file).toMatch(/s\.contract\.yaml$/);
  });

  it("refuse a base path the generated app serves itself, declared or defaulted", () => {
    for (const [base, reserved] of [
      ["/health", "/health"],
      ["/auth/users", "/auth"],
      ["/Docs", "/docs"],
      ["/docs/api", "/docs"],
      ["/redoc", "/redoc"],
      ["/healer", "/healer"],
      ["/metrics", "/metrics"],
      ["/", "/"],
    ]) {
      const r = checkFiles({
        "o.contract.yaml": entityYaml("order"),
        "r.contract.yaml": route(`  entity: entity/shop/order\n  base_path: ${base}\n  endpoints: [{method: GET, path: /}]\n`),
      });
      expect(r.findings, base).toEqual([
        expect.objectContaining({
          code: "route.reserved_base_path",
          path: "/spec/base_path",
          message: `base path '${base}' clashes with '${reserved}', which the generated app serves itself; choose another base_path`,
        }),
      ]);
    }
    // A name that only starts like a reserved one is free; an entity named `metric` defaults onto one.
    for (const base of ["/healthz", "/authors", "/documents"]) {
      const r = checkFiles({
        "o.contract.yaml": entityYaml("order"),
        "r.contract.yaml": route(`  entity: entity/shop/order\n  base_path: ${base}\n  endpoints: [{method: GET, path: /}]\n`),
      });
      expect(r.findings, base).toEqual([]);
    }
    const metrics = checkFiles({
      "o.contract.yaml": entityYaml("metric"),
      "r.contract.yaml": route("  entity: entity/shop/metric\n  endpoints: [{method: GET, path: /}]\n"),
    });
    expect(metrics.findings).toEqual([expect.objectContaining({ code: "route.reserved_base_path", path: "/spec/entity" })]);
  });

  it("check that display names a field of the referenced entity", () => {
    const r = checkFiles({
      "c.contract.yaml": entityYaml("customer", "    name: {type: string}\n"),
      "o.contract.yaml": entityYaml(
        "order",
        "    customer_id:\n      type: uuid\n      references: {entity: entity/shop/customer, display: full_name}\n",
      ),
    });
    expect(messages(r)).toEqual(["'full_name' is not one of ['id', 'name', 'created_at', 'updated_at']"]);
  });

  it("check route endpoints: standard operations, known fields and roles of the auth contract", () => {
    const auth =
      "apiVersion: charter/v1\nkind: Infra\nmetadata: {name: auth, domain: shop}\nspec:\n  category: auth\n  config: {provider: jwt, roles: [admin, clerk]}\n";
    const r = checkFiles({
      "o.contract.yaml": entityYaml("order"),
      "a.contract.yaml": auth,
      "r.contract.yaml": route(
        "  entity: entity/shop/order\n  global_behaviors: {roles: [admin, boss]}\n  endpoints:\n    - method: POST\n      path: /orders/{id}/archive\n    - method: POST\n      path: /orders\n      request_body: {required_fields: [title, weight]}\n      auto_fields: {ghost: now}\n    - method: PUT\n      path: /orders/{id}/state\n",
      ),
    });
    expect(messages(r).sort()).toEqual(
      [
        "'boss' is not one of ['admin', 'clerk']",
        "POST /orders/{id}/archive is not one of the standard endpoints of /orders (list, get, create, update, delete, state)",
        "PUT /orders/{id}/state needs an entity with a state_machine",
        "'weight' is not one of ['id', 'title', 'created_at', 'updated_at']",
        "'ghost' is not one of ['id', 'title', 'created_at', 'updated_at']",
      ].sort(),
    );
  });

  it("check defaults, enums and options against the field type", () => {
    const r = checkFiles({
      "o.contract.yaml": entityYaml(
        "order",
        "    a: {type: integer, default: 'x'}\n    b: {type: string, enum: [x, y], default: z}\n    c: {type: string, references: {entity: entity/shop/order}}\n    d: {type: string, constraints: {min: 1}}\n    e: {type: integer, constraints: {min: 5, max: 1}}\n    f: {type: string, constraints: {pattern: '('}}\n    g: {type: integer, computed: now}\n",
      ),
    });
    expect(messages(r).sort()).toEqual(
      [
        "'x' is not of type 'integer'",
        "'z' is not one of ['x', 'y']",
        "'string' is not one of ['uuid']",
        "min and max apply to integer and number fields, not 'string'",
        "5 is greater than the maximum of 1",
        "'(' is not a 'regex'",
        "'integer' is not one of ['datetime', 'date']",
      ].sort(),
    );
  });

  it("allow only one auth Infra contract, and bootstrap users with known roles", () => {
    const auth = (name: string, role: string) =>
      `apiVersion: charter/v1\nkind: Infra\nmetadata: {name: ${name}, domain: shop}\nspec:\n  category: auth\n  config: {provider: jwt, roles: [admin]}\n  bootstrap:\n    users: [{id: u, email: u@x.io, role: ${role}}]\n`;
    const r = checkFiles({ "a.contract.yaml": auth("auth", "root"), "b.contract.yaml": auth("sso", "admin") });
    expect(messages(r).sort()).toEqual([
      "'root' is not one of ['admin']",
      "only one auth Infra contract is allowed; another is infra/shop/auth",
    ]);
  });

  it("warn (without failing) about a number prefix with no sequence", () => {
    const r = checkFiles({ "o.contract.yaml": entityYaml("order", undefined, "  number_prefix: ORD\n") });
    expect(r.errors).toBe(0);
    expect(r.warnings).toBe(1);
    expect(r.ir).not.toBeNull();
  });

  it("store an entity whose plural is a system table apart, and refuse spec.table naming one, located", () => {
    const r = checkFiles({
      "entities/event.contract.yaml": entityYaml("event"),
      "entities/row_count.contract.yaml": entityYaml("row_count"),
    });
    expect(r.findings).toEqual([]);
    expect(r.ir?.entities.map((e) => [e.name, e.table, e.basePath])).toEqual([
      ["event", "event_records", "/events"],
      ["row_count", "row_count_records", "/row-counts"],
    ]);
    const own = checkFiles({ "entities/log.contract.yaml": entityYaml("log", undefined, "  table: schema_migrations\n") });
    expect(own.ir).toBeNull();
    expect(own.findings.map((f) => [f.file.endsWith("log.contract.yaml"), f.line, f.path, f.code])).toEqual([
      [true, 7, "/spec/table", "entity.system_table"],
    ]);
    expect(own.findings[0]?.message).toContain("applied migrations");
    const held = checkFiles({ "entities/log.contract.yaml": entityYaml("log", undefined, "  table: schema_migrations_held\n") });
    expect(held.ir).toBeNull();
    expect(held.findings.map((f) => [f.path, f.code])).toEqual([["/spec/table", "entity.system_table"]]);
    expect(held.findings[0]?.message).toContain("held back");
  });

  describe("agents and ai_integration", () => {
    const agent = (spec: string, name = "triage") =>
      `apiVersion: charter/v1\nkind: Agent\nmetadata: {name: ${name}, domain: shop}\nspec:\n${spec}`;
    const triage = (extra = "") =>
      agent(`  trigger: order_created\n  input: {entity: entity/shop/order, fields: [title]}\n  output: {updates: [total]}\n${extra}`);
    const orderRoute = route(
      "  entity: entity/shop/order\n  endpoints:\n    - method: POST\n      path: /orders\n      side_effects:\n        - emit_event: order_created\n",
    );
    const hooked = (hook: string) =>
      entityYaml("order", "    title: {type: string}\n    total: {type: number}\n", `  ai_integration:\n${hook}`);

    it("resolve the agents of ai_integration without a cycle (the agent depends on the entity)", () => {
      const r = checkFiles({
        "o.contract.yaml": hooked("    order_created: [agent/shop/triage]\n"),
        "a.contract.yaml": triage(),
        "r.contract.yaml": orderRoute,
      });
      expect(r.findings).toEqual([]);
      const order = r.ir?.entities.find((e) => e.name === "order");
      expect(order?.aiIntegration).toEqual({ order_created: ["agent/shop/triage"] });
      expect(r.ir?.graph.edges).toContainEqual(expect.objectContaining({ from: "agent/shop/triage", to: "entity/shop/order" }));
      expect(r.ir?.agents[0]).toMatchObject({ updates: ["total"], fallback: { action: "leave_unchanged" }, threshold: 0.7 });
    });

    it("accept a single FQN and record the ai_integration edge when the agent reads another entity", () => {
      const r = checkFiles({
        "o.contract.yaml": hooked("    order_created: agent/shop/audit\n"),
        "c.contract.yaml": entityYaml("customer", "    note: {type: string}\n"),
        "a.contract.yaml": agent(
          "  trigger: order_created\n  input: {entity: entity/shop/customer}\n  output: {updates: [note]}\n",
          "audit",
        ),
        "r.contract.yaml": orderRoute,
      });
      expect(r.findings).toEqual([]);
      expect(r.ir?.entities.find((e) => e.name === "order")?.aiIntegration).toEqual({ order_created: ["agent/shop/audit"] });
      expect(r.ir?.graph.edges).toContainEqual({ from: "agent/shop/audit", to: "entity/shop/order", via: "ai_integration" });
    });

    it("report an unknown agent or a contract of another kind in ai_integration where it is written", () => {
      const r = checkFiles({
        "o.contract.yaml": hooked("    order_created: [agent/shop/ghost, workflow/shop/flow]\n"),
        "flow.contract.yaml": wf(baseFlow),
        "r.contract.yaml": orderRoute,
      });
      expect(messages(r)).toEqual(["unresolved reference 'agent/shop/ghost'", "'workflow/shop/flow' is not one of the Agent contracts"]);
      expect(r.findings[0]).toMatchObject({ path: "/spec/ai_integration/order_created/0", line: 8, column: 21 });
      expect(r.findings[1]).toMatchObject({ path: "/spec/ai_integration/order_created/1" });
    });

    it("refuse an ai_integration that is not a map of event names to agent FQNs", () => {
      const r = checkFiles({ "o.contract.yaml": hooked("    order_created: 42\n    Bad-Event: agent/shop/triage\n") });
      expect(r.ir).toBeNull();
      expect(r.findings.map((f) => f.path)).toEqual(expect.arrayContaining(["/spec/ai_integration/order_created"]));
      expect(messages(r).some((m) => m.includes("'Bad-Event'"))).toBe(true);
    });

    it("require output.updates and input.fields to name fields of the input entity a client may write", () => {
      const r = checkFiles({
        "o.contract.yaml": entityYaml("order", "    title: {type: string}\n    total: {type: number}\n"),
        "a.contract.yaml": agent(
          "  trigger: order_created\n  input: {entity: entity/shop/order, fields: [title, colour]}\n  output: {updates: [total, created_at, size]}\n",
        ),
        "r.contract.yaml": orderRoute,
      });
      expect(r.ir).toBeNull();
      expect(r.findings.map((f) => [f.path, f.code])).toEqual([
        ["/spec/input/fields/1", "ref.unknown_field"],
        ["/spec/output/updates/1", "ref.unknown_field"],
        ["/spec/output/updates/2", "ref.unknown_field"],
      ]);
      expect(messages(r)[0]).toMatch(/^'colour' is not one of \[/);
    });

    it("require output.updates itself", () => {
      const r = checkFiles({ "a.contract.yaml": agent("  trigger: t\n  input: {entity: entity/shop/order}\n  output: {}\n") });
      expect(messages(r)).toContain("'updates' is a required property");
    });

    it("check the fallback: set needs values, and only of fields the agent may update", () => {
      const files = (fallback: string) => ({
        "o.contract.yaml": order(),
        "flow.contract.yaml": wf(baseFlow),
        "a.contract.yaml": triage(fallback),
        "r.contract.yaml": orderRoute,
      });
      const ok = checkFiles(files("  fallback: {action: set, values: {total: 0}}\n"));
      expect(ok.findings).toEqual([]);
      expect(ok.ir?.agents[0]?.fallback).toEqual({ action: "set", values: { total: 0 } });
      expect(messages(checkFiles(files("  fallback: {action: set}\n")))).toEqual(["'values' is a required property"]);
      const outside = checkFiles(files("  fallback: {action: set, values: {title: x}}\n"));
      expect(outside.findings[0]).toMatchObject({ path: "/spec/fallback/values/title", code: "ref.unknown_field" });
      expect(messages(checkFiles(files("  fallback: {action: explode}\n")))[0]).toMatch(/^'explode' is not one of/);
    });

    it("warn when a trigger or an ai_integration event is never emitted", () => {
      const r = checkFiles({
        "o.contract.yaml": hooked("    order_shipped: [agent/shop/triage]\n"),
        "a.contract.yaml": triage().replace("trigger: order_created", "trigger: order_craeted"),
        "r.contract.yaml": orderRoute,
      });
      expect(r.ir).not.toBeNull();
      expect(r.findings.map((f) => [f.severity, f.code, f.path])).toEqual([
        ["warning", "event.never_emitted", "/spec/trigger"],
        ["warning", "event.never_emitted", "/spec/ai_integration/order_shipped"],
      ]);
      expect(messages(r)[0]).toBe("event 'order_craeted' is never emitted; emitted events: ['order_created']");
    });
  });
});
