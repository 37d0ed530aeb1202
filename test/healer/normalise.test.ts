import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { Healer, normaliseFqn, numberPrefixOf, screamingSnakeCase, snakeCase } from "../../src/healer/index.js";
import { BASE_DOMAIN, makeProject } from "./helpers.js";

const noRegen = () => ({ files: 0, written: 0 });

describe("name normalisation", () => {
  it.each([
    ["TicketItem", "ticket_item"],
    ["ticketItem", "ticket_item"],
    ["ticket-item", "ticket_item"],
    ["Ticket Item", "ticket_item"],
    ["HTTPStatus", "http_status"],
    ["Café", "cafe"],
    ["2fa", "n_2fa"],
  ])("snake_case %s -> %s", (input, out) => expect(snakeCase(input)).toBe(out));

  it("graph edges, number prefixes and FQNs", () => {
    expect(screamingSnakeCase("placedBy")).toBe("PLACED_BY");
    expect(screamingSnakeCase("assigned-to")).toBe("ASSIGNED_TO");
    expect(numberPrefixOf("ord-1", "order")).toBe("ORD");
    expect(numberPrefixOf("tickets", "ticket")).toBe("TICKET");
    expect(numberPrefixOf("1", "order")).toBe("ORD");
    expect(normaliseFqn("Entity/Shop/OrderItem")).toBe("entity/shop/order_item");
    expect(normaliseFqn("widget/shop/x")).toBeNull();
  });
});

function project(edit: (domain: string) => void): { root: string; domain: string; healer: Healer } {
  const root = makeProject(BASE_DOMAIN);
  const domain = join(root, "domains", "shop");
  edit(domain);
  return { root, domain, healer: new Healer({ projectRoot: root, console: null, env: {}, regenerate: noRegen }) };
}

const file = (domain: string, rel: string): string => join(domain, rel);
const replaceIn = (path: string, from: string | RegExp, to: string): void => {
  const text = readFileSync(path, "utf8");
  const next = text.replace(from, to);
  if (next === text) throw new Error(`fixture edit did not apply to ${path}`);
  writeFileSync(path, next);
};

describe("tier 1 fixes through the pipeline", () => {
  it("keeps comments, key order and every untouched byte", async () => {
    const { domain, healer } = project((d) =>
      replaceIn(file(d, "entities/order.contract.yaml"), "graph_edge: PLACED_BY", "graph_edge: placedBy"),
    );
    const before = readFileSync(file(domain, "entities/order.contract.yaml"), "utf8");
    const summary = await healer.fix();
    expect(summary.applied).toBe(1);
    const after = readFileSync(file(domain, "entities/order.contract.yaml"), "utf8");
    expect(after).toBe(before.replace("graph_edge: placedBy", "graph_edge: PLACED_BY"));
    expect(after).toContain("graph_edge: PLACED_BY # the customer who placed it");
    const t = (await healer.store.list())[0];
    expect(t?.proposal).toMatchObject({
      method: "deterministic",
      confidence: 1,
      changes: [{ op: "replace", path: "/spec/fields/customer_id/references/graph_edge", value: "PLACED_BY", before: "placedBy" }],
    });
    await healer.close();
  });

  it("renames a contract and every reference to it in the domain", async () => {
    const { domain, healer } = project((d) => {
      replaceIn(file(d, "entities/customer.contract.yaml"), "name: customer", "name: ShopCustomer");
      replaceIn(file(d, "entities/order.contract.yaml"), "entity: entity/shop/customer", "entity: entity/shop/ShopCustomer");
    });
    const summary = await healer.fix();
    expect(summary.errors).toBe(2);
    expect(summary.applied).toBe(2);
    expect(summary.failed).toBe(0);
    expect(checkDomain(domain).errors).toBe(0);
    expect(readFileSync(file(domain, "entities/customer.contract.yaml"), "utf8")).toContain("name: shop_customer");
    expect(readFileSync(file(domain, "entities/order.contract.yaml"), "utf8")).toContain("entity: entity/shop/shop_customer");
    await healer.close();
  });

  it("renames the referenced contract when the reference is fixed first", async () => {
    const { domain, healer } = project((d) => {
      replaceIn(file(d, "entities/order.contract.yaml"), "name: order\n", "name: Order\n");
      replaceIn(file(d, "routes/order_api.contract.yaml"), "entity: entity/shop/order", "entity: entity/shop/Order");
      replaceIn(file(d, "pages/orders.contract.yaml"), "entity: entity/shop/order", "entity: entity/shop/Order");
    });
    // Only the route's ticket: its fix must carry the entity (and the page) along.
    const { check } = await healer.scan();
    expect(check.errors).toBe(3);
    const route = (await healer.store.list()).find((t) => t.contract_fqn === "route/shop/order_api");
    const done = await healer.processTicket(route?.id as string);
    expect(done.status).toBe("applied");
    expect(checkDomain(domain).errors).toBe(0);
    expect(done.proposal?.related.map((r) => r.file).sort()).toEqual([
      "domains/shop/entities/order.contract.yaml",
      "domains/shop/pages/orders.contract.yaml",
    ]);
    await healer.processQueue();
    expect((await healer.store.list()).every((t) => t.status === "applied")).toBe(true);
    await healer.close();
  });

  it("renames a workflow state with its transitions, guards and initial state", async () => {
    const { domain, healer } = project((d) => {
      const wf = file(d, "workflows/order_flow.contract.yaml");
      replaceIn(wf, "    shipped:\n      label", "    Shipped:\n      label");
      replaceIn(wf, "new: [shipped]\n    shipped: [delivered]", "new: [Shipped]\n    Shipped: [delivered]");
      writeFileSync(wf, `${readFileSync(wf, "utf8")}  guards:\n    "Shipped -> delivered":\n      require_fields: [total]\n`);
    });
    const summary = await healer.fix();
    expect(summary.applied).toBe(1);
    const text = readFileSync(file(domain, "workflows/order_flow.contract.yaml"), "utf8");
    expect(text).toContain("    shipped:\n      label: Shipped");
    expect(text).toContain("new: [shipped]\n    shipped: [delivered]");
    expect(text).toContain('"shipped -> delivered":');
    expect(checkDomain(domain).errors).toBe(0);
    await healer.close();
  });

  it("renames a field and its uses in pages", async () => {
    const { domain, healer } = project((d) => {
      replaceIn(file(d, "entities/order.contract.yaml"), "    title:\n", "    orderTitle:\n");
      replaceIn(file(d, "pages/orders.contract.yaml"), "columns: [number, title,", "columns: [number, orderTitle,");
    });
    const summary = await healer.fix();
    expect(summary.applied).toBe(1);
    expect(checkDomain(domain).errors).toBe(0);
    expect(readFileSync(file(domain, "pages/orders.contract.yaml"), "utf8")).toContain("columns: [number, order_title, priority");
    await healer.close();
  });

  it("a tier 1 fix whose result does not validate restores the file byte for byte", async () => {
    // 'Customer' normalises to 'customer', which another contract already is: a duplicate.
    const { domain, healer } = project((d) => {
      const src = readFileSync(file(d, "entities/customer.contract.yaml"), "utf8");
      writeFileSync(file(d, "entities/customer_copy.contract.yaml"), src.replace("name: customer", "name: Customer").replace("CUS", "CUC"));
    });
    const path = file(domain, "entities/customer_copy.contract.yaml");
    const bytes = readFileSync(path);
    const summary = await healer.fix();
    expect(summary.failed).toBe(1);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    const t = (await healer.store.list())[0];
    expect(t?.status).toBe("failed");
    expect(t?.resolution_note).toMatch(/does not validate .*duplicate contract.*restored/);
    expect(healer.history()).toHaveLength(0);
    await healer.close();
  });
});
