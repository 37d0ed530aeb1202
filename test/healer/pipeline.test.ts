import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import type { Proposer, ProposerInput, ProposerResult } from "../../src/healer/index.js";
import { Healer, HealerError, NO_PROVIDER_NOTE } from "../../src/healer/index.js";
import { BASE_DOMAIN, brokenShop, makeProject } from "./helpers.js";

const noRegen = () => ({ files: 0, written: 0 });

/** A deterministic stand-in for the LLM proposer: it rewrites the contract text with `edit`. */
class TestProposer implements Proposer {
  readonly name = "test";
  readonly inputs: ProposerInput[] = [];
  constructor(private readonly edit: (source: string) => ProposerResult) {}
  async propose(input: ProposerInput): Promise<ProposerResult> {
    this.inputs.push(input);
    return this.edit(input.contract.source);
  }
}

/** Puts back the `type: email` line the missing_field fixture lacks. */
const restoreType = new TestProposer((src) => ({
  after: src.replace("    email:\n      required: true", "    email:\n      type: email\n      required: true"),
  explanation: "add the missing field type",
}));

function missingFieldProject(proposer: Proposer | null): { root: string; healer: Healer; customer: string } {
  const root = makeProject(brokenShop("missing_type"));
  const healer = new Healer({ projectRoot: root, console: null, env: {}, proposer, regenerate: noRegen });
  return { root, healer, customer: join(root, "domains/shop/entities/customer.contract.yaml") };
}

describe("tier 2/3 without a provider", () => {
  it("the ticket ends failed with a note that says how to configure one, never queued forever", async () => {
    const root = makeProject(brokenShop("missing_type"));
    // No proposer given: the Healer selects one from this (empty) environment.
    const healer = new Healer({ projectRoot: root, console: null, env: {}, regenerate: noRegen });
    expect(healer.proposer).toBeNull();
    const summary = await healer.fix();
    expect(summary).toMatchObject({ errors: 1, tickets: 1, applied: 0, awaiting: 0, failed: 1, remainingErrors: 1 });
    const [t] = await healer.store.list();
    expect(t).toMatchObject({ status: "failed", tier: 2, priority: "medium", error_type: "missing_field" });
    expect(t?.resolution_note).toContain(NO_PROVIDER_NOTE);
    expect(t?.resolution_note).toContain("ANTHROPIC_API_KEY");
    expect(t?.resolution_note).toContain("charter doctor");
    expect(healer.notifier.sent.map((n) => n.event)).toEqual(["queued", "failed"]);
    expect(await healer.store.list({ status: "queued" })).toHaveLength(0);
    await healer.close();
  });

  it("a provider named in the environment becomes the LLM proposer", async () => {
    const healer = new Healer({ projectRoot: makeProject(), console: null, env: { GROQ_API_KEY: "k" }, regenerate: noRegen });
    expect(healer.proposer?.name).toBe("llm:groq/llama-3.3-70b-versatile");
    await healer.close();
  });

  it("once a provider is configured, retry proposes a fix for the failed ticket", async () => {
    const { root, healer } = missingFieldProject(null);
    await healer.fix();
    await healer.close();
    const withProposer = new Healer({ projectRoot: root, console: null, env: {}, proposer: restoreType, regenerate: noRegen });
    const [t] = await withProposer.store.list();
    const retried = await withProposer.retry(t?.id as string);
    expect(retried.status).toBe("proposed");
    await withProposer.close();
  });
});

describe("tier 2/3 with a proposer", () => {
  it("proposed -> approved -> applied: the contract is written, the diff recorded, code regenerated", async () => {
    const { healer, customer, root } = missingFieldProject(restoreType);
    let regenerated = 0;
    const h2 = new Healer({
      projectRoot: root,
      console: null,
      env: {},
      proposer: restoreType,
      regenerate: () => {
        regenerated++;
        return { files: 3, written: 3 };
      },
    });
    await healer.close();
    const summary = await h2.fix();
    expect(summary).toMatchObject({ applied: 0, awaiting: 1 });
    const [t] = await h2.store.list();
    expect(t?.status).toBe("proposed");
    expect(t?.proposal).toMatchObject({
      method: "llm_structural",
      confidence: 0.7,
      changes: [{ op: "add", path: "/spec/fields/email/type", value: "email" }],
    });
    const proposed = h2.notifier.sent.find((n) => n.event === "proposed");
    expect(proposed?.message).toContain(`/healer/tickets/${t?.id}/view`);

    const done = await h2.approve(String(t?.id).slice(0, 6));
    expect(done.status).toBe("applied");
    expect(regenerated).toBe(1);
    expect(readFileSync(customer, "utf8")).toContain("type: email");
    expect(checkDomain(join(root, "domains")).errors).toBe(0);
    const [record] = h2.history();
    expect(record).toMatchObject({ ticket_id: t?.id, origin: "HEALER", contract_fqn: "entity/shop/customer" });
    expect(record?.files[0]?.diff).toContain("+      type: email");
    expect(h2.notifier.sent.find((n) => n.event === "applied")?.message).toMatch(/regenerated 3 file/);
    await expect(h2.approve(t?.id as string)).rejects.toThrow(/only a proposed ticket can be approved/);
    await h2.close();
  });

  it("proposed -> rejected keeps the reason and leaves the contract alone", async () => {
    const { healer, customer } = missingFieldProject(restoreType);
    const before = readFileSync(customer);
    await healer.fix();
    const [t] = await healer.store.list();
    const rejected = await healer.reject(t?.id as string, "I will fix it by hand");
    expect(rejected).toMatchObject({ status: "rejected", resolution_note: "I will fix it by hand" });
    expect(rejected.resolved_at).not.toBeNull();
    expect(readFileSync(customer).equals(before)).toBe(true);
    expect(healer.notifier.sent.at(-1)).toMatchObject({ event: "rejected", status: "rejected" });
    await healer.close();
  });

  it("an approved fix that fails validation restores the file byte for byte and fails the ticket", async () => {
    // Valid on its own, but it requires a contract that does not exist.
    const breaking = new TestProposer((src) => ({
      after: src
        .replace("    email:\n      required: true", "    email:\n      type: email\n      required: true")
        .replace("tags: [core]\n", "tags: [core]\nrequires:\n  - entity/shop/nowhere\n"),
      explanation: "add the type and a bogus dependency",
    }));
    const { healer, customer } = missingFieldProject(breaking);
    const before = readFileSync(customer);
    await healer.fix();
    const [t] = await healer.store.list();
    expect(t?.status).toBe("proposed");
    const failed = await healer.approve(t?.id as string);
    expect(failed.status).toBe("failed");
    expect(failed.resolution_note).toMatch(/unresolved reference 'entity\/shop\/nowhere'.*restored/);
    expect(readFileSync(customer).equals(before)).toBe(true);
    expect(healer.history()).toHaveLength(0);
    expect(healer.notifier.sent.at(-1)).toMatchObject({ event: "failed", status: "failed" });

    // retry: back to the queue, proposed again by the (now better) proposer.
    const better = new Healer({ projectRoot: healer.layout.root, console: null, env: {}, proposer: restoreType, regenerate: noRegen });
    const retried = await better.retry(String(t?.id).slice(0, 8));
    expect(retried.status).toBe("proposed");
    await better.close();
    await healer.close();
  });

  it("a proposal that does not validate on its own fails the ticket at once", async () => {
    const invalid = new TestProposer((src) => ({ after: src.replace("type: string", "type: strang"), explanation: "bad" }));
    const { healer } = missingFieldProject(invalid);
    await healer.fix();
    const [t] = await healer.store.list();
    expect(t?.status).toBe("failed");
    expect(t?.resolution_note).toMatch(/^proposal does not validate/);
    await healer.close();
  });

  it("a proposer without an answer fails the ticket with its reason", async () => {
    const { healer } = missingFieldProject(new TestProposer(() => ({ reason: "model declined" })));
    await healer.fix();
    expect((await healer.store.list())[0]).toMatchObject({ status: "failed", resolution_note: "no proposal: model declined" });
    await healer.close();
  });
});

describe("a domain with tier 1 and tier 2 errors", () => {
  it("defers regeneration until the domain is valid, and closes tickets whose error was fixed by hand", async () => {
    const root = makeProject(brokenShop("invalid_enum"));
    const order = join(root, "domains/shop/entities/order.contract.yaml");
    const customer = join(root, "domains/shop/entities/customer.contract.yaml");
    writeFileSync(order, readFileSync(order, "utf8").replace("graph_edge: PLACED_BY", "graph_edge: placedBy"));
    let regenerations = 0;
    const regenerate = () => {
      regenerations++;
      return { files: 5, written: 5 };
    };
    // A proposer whose fix is not what the user later does by hand.
    const toText = new TestProposer((src) => ({ after: src.replace("type: mail", "type: text"), explanation: "use text" }));
    const healer = new Healer({ projectRoot: root, console: null, env: {}, proposer: toText, regenerate });
    const first = await healer.fix();
    expect(first).toMatchObject({ errors: 2, applied: 1, awaiting: 1, remainingErrors: 1, regenerated: 0 });
    expect(regenerations).toBe(0);
    expect(healer.history()[0]?.regeneration).toBe("deferred");
    expect(healer.notifier.sent.find((n) => n.event === "applied")?.message).toMatch(/regeneration deferred/);

    // The user fixes the tier 2 error by hand; the next run closes its ticket and regenerates.
    writeFileSync(customer, readFileSync(customer, "utf8").replace("type: mail", "type: email"));
    const second = await healer.fix();
    expect(second).toMatchObject({ errors: 0, tickets: 0, remainingErrors: 0, regenerated: 5 });
    expect(regenerations).toBe(1);
    expect(healer.history()[0]?.regeneration).toBe("done");
    const waiting = await healer.store.list({ status: "rejected" });
    expect(waiting).toHaveLength(1);
    expect(waiting[0]?.resolution_note).toMatch(/^obsolete: /);
    await healer.close();
  });
});

describe("runtime reports", () => {
  it("a generator bug goes straight to failed with a diagnostic", async () => {
    const healer = new Healer({ projectRoot: makeProject(), console: null, env: {}, regenerate: noRegen });
    const { ticket } = await healer.report({
      source: "runtime",
      contract_fqn: "entity/shop/order",
      error: 'asyncpg.exceptions.UndefinedColumnError: column "total_amount" does not exist',
      context: { status_code: 500, request_path: "/orders", method: "GET" },
    });
    expect(ticket).toMatchObject({ tier: 3, priority: "critical", error_type: "runtime_500", fixable_by: "generator" });
    const done = await healer.processTicket(ticket.id);
    expect(done.status).toBe("failed");
    expect(done.resolution_note).toMatch(/generator bug \(column "total_amount" does not exist and no contract defines it\)/);
    expect(healer.notifier.sent.map((n) => n.event)).toEqual(["queued", "failed"]);
    await healer.close();
  });

  it("a report from the wire right after a fix is read against the fixed domain, not the view of a moment before", async () => {
    // Under `charter dev` a contract saved broken is reported, fixed by tier 1 and served again in
    // well under a second: a runtime error of the next request found no route in the view of the
    // broken domain (reused for up to a second), and its ticket named no contract to fix.
    const root = makeProject(brokenShop("graph_edge"));
    const healer = new Healer({ projectRoot: root, console: null, env: {}, regenerate: noRegen });
    const runtime = (error: string) => ({
      source: "runtime" as const,
      error,
      context: { status_code: 500, request_path: "/customers", method: "POST" },
    });
    // The clock stands still: the view is never reused because a second went by.
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.now());
    try {
      const [broken] = await healer.reportBatch([runtime("RuntimeError: before the fix")]);
      expect(broken).toMatchObject({ ticket: { contract_fqn: null } });
      expect(await healer.fix()).toMatchObject({ applied: 1, remainingErrors: 0 });
      const [fixed] = await healer.reportBatch([runtime("RuntimeError: after the fix")]);
      expect(fixed).toMatchObject({ ticket: { contract_fqn: "entity/shop/customer" } });
    } finally {
      now.mockRestore();
      await healer.close();
    }
  });

  it("a missing column the contracts define is database drift: failed with the hint to run the migrations", async () => {
    const healer = new Healer({ projectRoot: makeProject(BASE_DOMAIN), console: null, env: {}, regenerate: noRegen });
    const { ticket } = await healer.report({
      source: "runtime",
      contract_fqn: "entity/shop/customer",
      error: 'asyncpg.exceptions.UndefinedColumnError: column "email" does not exist',
      context: { status_code: 500, request_path: "/customers", method: "GET" },
    });
    expect(ticket).toMatchObject({ tier: 3, priority: "critical", error_type: "database_drift", fixable_by: "data" });
    const done = await healer.processTicket(ticket.id);
    expect(done.status).toBe("failed");
    expect(done.resolution_note).toMatch(/database is behind the contracts \(column "email" does not exist\)/);
    expect(done.resolution_note).toContain("charter forge generate DOMAIN --target migrations");
    expect(done.resolution_note).not.toMatch(/generator bug/);
    await healer.close();
  });

  it("two copies of one project (two replicas' pods) attempt with the same keys; a contract change alters them", async () => {
    // Absolute paths in the contracts' hash made a repeat at the other replica look like a change,
    // so a failed ticket was asked again (replicas.test.ts saw a ticket claimed twice).
    const [a, b] = [makeProject(BASE_DOMAIN), makeProject(BASE_DOMAIN)].map(
      (root) => new Healer({ projectRoot: root, console: null, env: {}, regenerate: noRegen }),
    ) as [Healer, Healer];
    expect(a.layout.root).not.toBe(b.layout.root);
    expect(a.attemptKeys(0)).toEqual(b.attemptKeys(0));
    const order = join(b.layout.root, "domains/shop/entities/order.contract.yaml");
    writeFileSync(order, readFileSync(order, "utf8").replace("description: A customer order", "description: An order"));
    expect(b.attemptKeys(0).attempt_contracts).not.toBe(a.attemptKeys(0).attempt_contracts);
    expect(b.attemptKeys(0).attempt_model).toBe(a.attemptKeys(0).attempt_model);
    await a.close();
    await b.close();
  });

  it("refuses a report without an error message", async () => {
    const healer = new Healer({ projectRoot: makeProject(), console: null, env: {} });
    await expect(healer.report({ source: "runtime", error: "  " })).rejects.toThrow(HealerError);
    await expect(healer.report({ source: "nope" as "runtime", error: "x" })).rejects.toThrow(/source must be one of/);
    await healer.store.close();
  });

  it("reports success rate per tier, recurring errors and recent resolutions", async () => {
    const healer = new Healer({ projectRoot: makeProject(), console: null, env: {}, regenerate: noRegen });
    for (let i = 0; i < 3; i++)
      await healer.report({ source: "runtime", contract_fqn: "entity/shop/order", error: "NameError: x", context: { status_code: 500 } });
    await healer.processQueue();
    const s = await healer.status();
    expect(s.queue.failed).toBe(1);
    expect(s.total).toBe(1);
    expect(s.success_rate).toEqual({ tier_1: 0, tier_2: 0, tier_3: 0 });
    expect(s.recurring).toEqual([{ contract_fqn: "entity/shop/order", error_type: "runtime_500", count: 3 }]);
    expect(s.recent).toHaveLength(1);
    expect(s.recent[0]).toMatchObject({ fqn: "entity/shop/order", status: "failed", tier: 3 });
    await healer.close();
  });
});
