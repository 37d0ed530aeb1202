import { describe, expect, it } from "vitest";
import { checkDomain, compileDomain, type DependencyEdge, type EntityIR, findCycles, topologicalOrder } from "../../src/compiler/index.js";
import { pluralize } from "../../src/compiler/naming.js";
import { type LoadedContract, parseContractSource } from "../../src/contracts/index.js";

const edge = (from: string, to: string): DependencyEdge => ({ from, to, via: "requires" });

describe("dependency graph", () => {
  it("orders dependencies first: A -> B -> C gives C, B, A", () => {
    expect(topologicalOrder(["a", "b", "c"], [edge("a", "b"), edge("b", "c")]).order).toEqual(["c", "b", "a"]);
  });

  it("breaks ties by name, whatever the input order", () => {
    const edges = [edge("d", "a"), edge("c", "a"), edge("b", "a")];
    expect(topologicalOrder(["d", "c", "b", "a"], edges).order).toEqual(["a", "b", "c", "d"]);
    expect(topologicalOrder(["a", "b", "c", "d"], [...edges].reverse()).order).toEqual(["a", "b", "c", "d"]);
  });

  it("leaves nodes on a cycle out of the order and finds the cycle once", () => {
    const edges = [edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("d", "a")];
    const { order, rest } = topologicalOrder(["a", "b", "c", "d"], edges);
    expect(order).toEqual([]);
    expect(rest).toEqual(["a", "b", "c", "d"]);
    expect(findCycles(["a", "b", "c", "d"], edges)).toEqual([["a", "b", "c", "a"]]);
  });

  it("reports the shortest cycle of a knot, and separate knots separately", () => {
    const edges = [edge("a", "b"), edge("b", "a"), edge("b", "c"), edge("c", "a"), edge("x", "y"), edge("y", "x")];
    expect(findCycles(["a", "b", "c", "x", "y"], edges)).toEqual([
      ["a", "b", "a"],
      ["x", "y", "x"],
    ]);
  });

  it("handles a long chain without recursion limits", () => {
    const n = 20_000;
    const nodes = Array.from({ length: n }, (_, i) => `n${String(i).padStart(6, "0")}`);
    const edges = nodes.slice(1).map((node, i) => edge(node, nodes[i] as string));
    edges.push(edge(nodes[0] as string, nodes[n - 1] as string));
    const cycles = findCycles(nodes, edges);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toHaveLength(n + 1);
  });
});

describe("naming", () => {
  it("pluralizes the last word of snake_case names", () => {
    expect(["ticket", "category", "status", "box", "person", "ticket_category", "day", "batch"].map(pluralize)).toEqual([
      "tickets",
      "categories",
      "statuses",
      "boxes",
      "people",
      "ticket_categories",
      "days",
      "batches",
    ]);
  });
});

describe("compiled IR of the helpdesk example", () => {
  const result = checkDomain("examples/helpdesk");
  const ir = result.ir;
  if (!ir) throw new Error(`example does not compile: ${JSON.stringify(result.findings, null, 2)}`);
  const entity = (name: string): EntityIR => ir.entities.find((e) => e.name === name) as EntityIR;

  it("summarises the domain", () => {
    expect(result.findings).toEqual([]);
    expect(ir.domain).toBe("helpdesk");
    expect(ir.summary).toEqual({ contracts: 13, entities: 3, workflows: 1, routes: 3, pages: 3, agents: 1, mixins: 1, infra: 1 });
  });

  it("composes mixins into effective fields: id first, mixin fields, own fields, timestamps, state last", () => {
    const names = entity("ticket").fields.map((f) => f.name);
    expect(names.slice(0, 2)).toEqual(["id", "number"]);
    expect(names).toEqual(
      expect.arrayContaining([
        "created_at",
        "updated_at",
        "deleted_at",
        "deleted_by",
        "is_deleted",
        "tags",
        "due_at",
        "sla_breached",
        "title",
      ]),
    );
    expect(names.at(-1)).toBe("state");
    expect(new Set(names).size).toBe(names.length);
    const agentFields = entity("agent").fields.map((f) => f.name);
    expect(agentFields).toEqual(["id", "created_at", "updated_at", "name", "email", "team", "active", "max_open_tickets"]);
  });

  it("resolves computed fields, sequences with the number prefix, and writability", () => {
    const t = entity("ticket");
    const f = (n: string) => t.fields.find((x) => x.name === n);
    expect(f("number")?.computed).toEqual({
      kind: "sequence",
      format: "{prefix}-{n:05}",
      prefix: "TKT",
      sequenceName: "ticket_number_seq",
    });
    expect(f("created_by")?.computed).toEqual({ kind: "current_user" });
    expect(f("updated_at")?.computed).toEqual({ kind: "now_on_update" });
    expect(f("id")).toMatchObject({ primaryKey: true, writable: false, updatable: false, type: "uuid" });
    expect(f("title")).toMatchObject({ required: true, writable: true, updatable: true, constraints: { minLength: 3, maxLength: 200 } });
    expect(f("reporter_email")).toMatchObject({ immutable: true, writable: true, updatable: false });
    expect(f("state")).toMatchObject({
      default: "new",
      writable: false,
      enum: ["new", "triaged", "in_progress", "waiting_on_customer", "resolved", "closed", "cancelled"],
    });
    expect(f("customer_id")?.references).toEqual({
      entity: "entity/helpdesk/customer",
      entityName: "customer",
      display: "name",
      graphEdge: "RAISED_BY",
      graphDirection: "forward",
      onDelete: "restrict",
    });
    expect(t.softDelete).toBe(true);
    expect(t.searchFields).toEqual(expect.arrayContaining(["title", "description", "reporter_email"]));
  });

  it("derives table names, class names and base paths", () => {
    expect(ir.entities.map((e) => [e.name, e.className, e.table, e.basePath])).toEqual([
      ["agent", "Agent", "support_agents", "/agents"],
      ["customer", "Customer", "customers", "/customers"],
      ["ticket", "Ticket", "tickets", "/tickets"],
    ]);
  });

  it("gives every route all standard endpoints, with declared rules folded in", () => {
    const route = ir.routes.find((r) => r.name === "ticket_api");
    expect(route?.endpoints.map((e) => `${e.operation} ${e.method} ${e.declared}`)).toEqual([
      "list GET true",
      "get GET true",
      "create POST true",
      "update PATCH true",
      "delete DELETE true",
      "transition PUT true",
    ]);
    const create = route?.endpoints[2];
    expect(create?.validation[0]?.onFail).toEqual({
      status: 422,
      error: "validation_error",
      message: "A critical ticket needs a description of at least 20 characters",
    });
    expect(create?.sideEffects).toEqual([{ emitEvent: "ticket_created" }]);
    expect(create?.roles).toEqual(["admin", "agent"]);
    expect(route?.endpoints[4]?.roles).toEqual(["admin"]);
    const customer = ir.routes.find((r) => r.name === "customer_api");
    expect(customer?.basePath).toBe("/customers");
    expect(customer?.endpoints.map((e) => e.operation)).toEqual(["list", "get", "create", "update", "delete"]);
  });

  it("resolves the workflow with guards, side effects and type overrides", () => {
    const wf = ir.workflows[0];
    expect(wf?.entities).toEqual(["entity/helpdesk/ticket"]);
    expect(wf?.transitions.closed).toEqual([]);
    expect(wf?.guards.map((g) => `${g.from}->${g.to}`)).toEqual(["triaged->in_progress", "in_progress->resolved", "resolved->closed"]);
    expect(wf?.guards[1]?.condition?.expr).toMatchObject({ type: "compare", op: ">=" });
    expect(wf?.sideEffects[1]?.actions).toEqual([{ emitEvent: "ticket_reopened" }, { set: { escalated: true } }]);
    expect(wf?.typeOverrides).toEqual({
      field: "type",
      overrides: [{ value: "incident", transitions: { new: ["in_progress", "cancelled"] } }],
    });
  });

  it("resolves auth with roles and bootstrap users", () => {
    expect(ir.auth).toMatchObject({ provider: "jwt", roles: ["admin", "agent", "viewer"] });
    expect(ir.auth?.users.map((u) => u.role)).toEqual(["admin", "agent", "viewer"]);
  });

  it("builds the dependency graph with a stable topological order", () => {
    const { order, edges } = ir.graph;
    const pos = (fqn: string) => order.indexOf(fqn);
    for (const e of edges) expect(pos(e.to), `${e.from} -> ${e.to}`).toBeLessThan(pos(e.from));
    expect(order).toHaveLength(ir.graph.nodes.length);
    expect(edges).toContainEqual({ from: "entity/helpdesk/ticket", to: "entity/helpdesk/customer", via: "reference" });
    expect(edges).toContainEqual({ from: "entity/helpdesk/ticket", to: "mixin/stdlib/identifiable", via: "mixin" });
  });

  it("is plain JSON and the same on every compile", () => {
    expect(JSON.parse(JSON.stringify(ir))).toEqual(ir);
    expect(JSON.stringify(checkDomain("examples/helpdesk").ir)).toBe(JSON.stringify(ir));
  });
});

describe("typed specs", () => {
  const parse = (source: string): LoadedContract => {
    const r = parseContractSource(source, "/t/x.contract.yaml", "x.contract.yaml");
    if (!("contract" in r)) throw new Error("no contract");
    return r.contract;
  };
  const entity = "apiVersion: charter/v1\nkind: Entity\nmetadata: {name: ticket, domain: d}\nspec: {fields: {title: {type: string}}}\n";

  it("compiles a contract that passes its schema", () => {
    expect(compileDomain([parse(entity)]).ir?.entities.map((e) => e.fqn)).toEqual(["entity/d/ticket"]);
  });

  it("refuses, without reading it, a contract handed over as valid that fails its schema", () => {
    // `endpoints` a string: code reading the typed spec would call forEach on it.
    const route = parse(
      "apiVersion: charter/v1\nkind: Route\nmetadata: {name: tickets, domain: d}\nspec: {entity: entity/d/ticket, endpoints: oops}\n",
    );
    const result = compileDomain([parse(entity), route]);
    expect(result.ir).toBeNull();
    expect(result.findings).toEqual([]);
  });
});
