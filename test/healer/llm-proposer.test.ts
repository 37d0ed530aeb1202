import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Healer } from "../../src/healer/index.js";
import { stripUnknownFieldKeys } from "../../src/healer/proposal/whitelist.js";
import { useFakeLlm } from "../support/fake-llm.js";
import { BASE_DOMAIN, makeProject } from "./helpers.js";

const noRegen = () => ({ files: 0, written: 0 });
const llm = useFakeLlm();
const ORDER = "domains/shop/entities/order.contract.yaml";

function runtimeReport(error: string) {
  return {
    source: "runtime" as const,
    contract_fqn: "entity/shop/order",
    error,
    stacktrace: 'Traceback (most recent call last):\n  File "app/routes/orders.py", line 40\nKeyError: x',
    context: { status_code: 500, path: "/orders/", method: "POST" },
  };
}

describe("the LLM proposer's prompt", () => {
  it("carries the error, the stack, the contract, the contracts it references and earlier fixes as history", async () => {
    const fake = llm();
    const root = makeProject(BASE_DOMAIN);
    const healer = new Healer({ projectRoot: root, console: null, env: fake.env(), regenerate: noRegen });
    const order = readFileSync(join(root, ORDER), "utf8");
    const first = order.replace("description: A customer order", "description: A customer order, with a title");
    fake.reply({ json: { contract: first, explanation: "clarify" } });
    const a = (await healer.report(runtimeReport("KeyError: 'title'"))).ticket;
    expect((await healer.processTicket(a.id)).status).toBe("proposed");
    expect((await healer.approve(a.id)).status).toBe("applied");

    fake.reply({ json: { contract: first.replace("default: medium", "default: low"), explanation: "lower default" } });
    const b = (await healer.report(runtimeReport("ValueError: priority"))).ticket;
    expect((await healer.processTicket(b.id)).status).toBe("proposed");
    const prompt = fake.userPrompt(1);
    expect(prompt).toContain("## Error (runtime, runtime_500, tier 3)\n<untrusted-report>\nValueError: priority\n</untrusted-report>");
    expect(prompt).toContain("method: POST");
    expect(prompt).toContain('File "app/routes/orders.py", line 40');
    expect(prompt).toContain("## The contract entity/shop/order (domains/shop/entities/order.contract.yaml)");
    expect(prompt).toContain("## Contracts it references (read only)");
    expect(prompt).toContain("### entity/shop/customer");
    expect(prompt).toContain("### workflow/shop/order_flow");
    expect(prompt).toContain("## Earlier fixes of this contract (newest first)");
    expect(prompt).toContain("+  description: A customer order, with a title");
    const system = fake.requests[1]?.body.messages?.find((m) => m.role === "system")?.content ?? "";
    expect(system).toContain('{"contract": "<the whole corrected contract as YAML text>"');
    expect(system).toContain(
      "type, description, required, immutable, default, format, enum, items_type, computed, constraints, references",
    );
    await healer.close();
  });

  it("a tier 3 proposal is llm_runtime with confidence 0.5, its changes JSON Patch with before", async () => {
    const fake = llm();
    const root = makeProject(BASE_DOMAIN);
    const healer = new Healer({ projectRoot: root, console: null, env: fake.env(), regenerate: noRegen });
    const order = readFileSync(join(root, ORDER), "utf8");
    fake.reply({ json: { contract: order.replace("default: medium", "default: high"), explanation: "raise it" } });
    const t = await healer.processTicket((await healer.report(runtimeReport("KeyError: 'x'"))).ticket.id);
    expect(t.proposal).toMatchObject({
      method: "llm_runtime",
      confidence: 0.5,
      changes: [{ op: "replace", path: "/spec/fields/priority/default", value: "high", before: "medium" }],
    });
    await healer.close();
  });

  it("cancelPending ends a call in flight and puts the ticket back in the queue", async () => {
    const fake = llm();
    fake.reply({ hang: true }, { hang: true });
    const healer = new Healer({ projectRoot: makeProject(BASE_DOMAIN), console: null, env: fake.env(), regenerate: noRegen });
    const pending = healer.processTicket((await healer.report(runtimeReport("KeyError: 'y'"))).ticket.id);
    await new Promise((r) => setTimeout(r, 200));
    healer.cancelPending();
    const t = await pending;
    expect(t.status).toBe("queued");
    expect(t.resolution_note).toMatch(/requeued: the Healer stopped/);
    await healer.close();
  });
});

describe("the whitelist", () => {
  it("removes unknown field properties and constraint keys of entities and mixins only, keeping comments", () => {
    const entity = `kind: Entity
spec:
  fields:
    a:
      type: string # keep me
      required_when: b
      constraints:
        maxLength: 3
        unique: true
`;
    expect(stripUnknownFieldKeys(entity)).toEqual({
      text: "kind: Entity\nspec:\n  fields:\n    a:\n      type: string # keep me\n      constraints:\n        maxLength: 3\n",
      removed: ["/spec/fields/a/required_when", "/spec/fields/a/constraints/unique"],
    });
    const route = "kind: Route\nspec:\n  fields:\n    a:\n      odd: 1\n";
    expect(stripUnknownFieldKeys(route)).toEqual({ text: route, removed: [] });
    expect(stripUnknownFieldKeys("kind: [unclosed")).toEqual({ text: "kind: [unclosed", removed: [] });
  });
});
