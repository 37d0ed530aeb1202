import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { runCharter as runCharterWithEnv } from "../support/cli.js";
import { FakeLlm } from "../support/fake-llm.js";
import { brokenExamples, listFiles, makeProject, NO_PROVIDER_ENV, runCharterAsync, TIER1 } from "./helpers.js";
import { startHealerProcess } from "./serve-process.js";

/** `charter` with no LLM provider in its environment, whatever the machine has set. */
const runCharter = (args: readonly string[], options: { cwd: string; env?: Record<string, string> }) =>
  runCharterWithEnv(args, { ...options, env: { ...NO_PROVIDER_ENV, ...options.env } });

let fake: FakeLlm;
beforeAll(async () => {
  fake = await FakeLlm.start();
});
afterAll(async () => {
  await fake.close();
});

function counts(stdout: string): Record<string, number> {
  const n = (label: string): number => Number(new RegExp(`${label}: (\\d+)`).exec(stdout)?.[1] ?? Number.NaN);
  return {
    errors: Number(/(\d+) error\(s\)/.exec(stdout)?.[1] ?? Number.NaN),
    warnings: Number(/(\d+) warning\(s\)/.exec(stdout)?.[1] ?? Number.NaN),
    tickets: n("Tickets"),
    applied: n("Fixes applied"),
    awaiting: n("Fixes awaiting approval"),
    remaining: n("Errors remaining"),
  };
}

describe("charter healer fix on the broken examples", () => {
  it.each(brokenExamples())("examples/broken/$type", ({ type, dir }) => {
    const root = makeProject(dir, type);
    const files = listFiles(join(root, "domains"));
    const before = new Map(files.map((f) => [f, readFileSync(join(root, "domains", f), "utf8")]));
    const r = runCharter(["healer", "fix"], { cwd: root });
    expect(r.stderr).toBe("");
    // A fix that failed (no provider for tier 2) is a failed run.
    expect(r.status).toBe(TIER1.has(type) ? 0 : 1);
    const c = counts(r.stdout);
    // Each broken example holds exactly one error; the warnings are whatever the validator says.
    const check = checkDomain(dir);
    expect(check.errors).toBe(1);
    expect(c.errors).toBe(1);
    expect(c.warnings).toBe(check.warnings);
    expect(c.tickets).toBe(1);
    expect(r.stdout).toContain("[healer:queued]");
    const tickets = JSON.parse(runCharter(["healer", "tickets", "--format", "json"], { cwd: root }).stdout) as {
      error_type: string;
      status: string;
      resolution_note: string;
    }[];
    expect(tickets.map((t) => t.error_type)).toEqual([type]);
    if (TIER1.has(type)) {
      expect(c).toMatchObject({ applied: c.tickets, awaiting: 0, remaining: 0 });
      expect(r.stdout).toContain("[healer:applied]");
      expect(runCharter(["forge", "validate", "domains"], { cwd: root }).status).toBe(0);
      expect(listFiles(join(root, "runtime")).length).toBeGreaterThan(0);
      expect(listFiles(join(root, ".forge", "diffs")).length).toBeGreaterThan(0);
    } else {
      // No provider: the tier 2 ticket fails at once with the way to configure one.
      expect(c).toMatchObject({ applied: 0, awaiting: 0, remaining: 1 });
      expect(r.stdout).toContain("[healer:failed]");
      for (const [f, text] of before) expect(readFileSync(join(root, "domains", f), "utf8")).toBe(text);
      expect(tickets.map((t) => t.status)).toEqual(["failed"]);
      expect(tickets[0]?.resolution_note).toMatch(/no LLM provider is configured.*OPENAI_API_KEY/);
    }
  });
});

describe("charter healer fix on a lone domain folder (examples/helpdesk style)", () => {
  it("writes inside the folder, keeps its state beside it, and exits non-zero when a fix fails", () => {
    const examples = new Map(brokenExamples().map((e) => [e.type, e.dir]));
    const base = makeProject();
    const naming = join(base, "examples", "naming");
    cpSync(examples.get("naming") as string, naming, { recursive: true });
    const r = runCharter(["healer", "fix", "examples/naming"], { cwd: base });
    expect(r.status).toBe(0);
    expect(counts(r.stdout)).toMatchObject({ applied: 1, remaining: 0 });
    expect(runCharter(["forge", "validate", "examples/naming"], { cwd: base }).status).toBe(0);
    expect(existsSync(join(base, "examples", ".forge", "healer", "healer.db"))).toBe(true);
    expect(listFiles(naming).some((f) => f.startsWith(".forge"))).toBe(false);

    const invalid = join(base, "examples", "invalid_enum");
    cpSync(examples.get("invalid_enum") as string, invalid, { recursive: true });
    const failed = runCharter(["healer", "fix", "examples/invalid_enum"], { cwd: base });
    expect(failed.status).toBe(1);
    expect(failed.stdout).toContain("[healer:failed]");
  });
});

describe("charter healer commands", () => {
  it("show, status, tickets, reject, approve, retry and history move and show tickets", async () => {
    const examples = new Map(brokenExamples().map((e) => [e.type, e.dir]));
    const root = makeProject(examples.get("graph_edge"), "shop");
    // A second domain folder with a tier 2 error, scanned through --project from elsewhere.
    const other = makeProject(examples.get("invalid_enum"), "shop");
    const fix = runCharter(["healer", "fix", "--project", other], { cwd: root });
    expect(fix.status).toBe(1);
    expect(counts(fix.stdout)).toMatchObject({ applied: 0, awaiting: 0 });

    const list = JSON.parse(runCharter(["healer", "tickets", "--project", other, "--format", "json"], { cwd: root }).stdout) as {
      id: string;
    }[];
    expect(list).toHaveLength(1);
    const id = (list[0] as { id: string }).id;

    const show = runCharter(["healer", "show", id.slice(0, 6), "--project", other], { cwd: root });
    expect(show.status).toBe(0);
    expect(show.stdout).toMatch(/error type\s+invalid_enum/);
    expect(show.stdout).toMatch(/status\s+failed/);
    expect(show.stdout).toContain("no LLM provider is configured");

    const short = runCharter(["healer", "show", id.slice(0, 3), "--project", other], { cwd: root });
    expect(short.status).toBe(1);
    expect(short.stderr).toMatch(/too short: give at least 4 characters/);
    expect(runCharter(["healer", "show", "0000aaaa", "--project", other], { cwd: root }).stderr).toMatch(/no ticket with id or prefix/);

    const approve = runCharter(["healer", "approve", id.slice(0, 8), "--project", other], { cwd: root });
    expect(approve.status).toBe(1);
    expect(approve.stderr).toMatch(/is failed; only a proposed ticket can be approved/);
    expect(runCharter(["healer", "reject", id.slice(0, 8), "--project", other], { cwd: root }).stderr).toMatch(
      /is failed; only a proposed or queued ticket can be rejected/,
    );

    // With a provider configured, retry asks it (async: the fake answers from this process).
    const product = join(other, "domains/shop/entities/product.contract.yaml");
    const source = readFileSync(product, "utf8");
    fake.reply({ json: { contract: source.replace("type: int", "type: integer"), explanation: "integer is the type" } });
    const retried = await runCharterAsync(["healer", "retry", id.slice(0, 8), "--project", other], { cwd: root, env: fake.env() });
    expect(retried.stderr).toBe("");
    expect(retried.stdout).toMatch(/: proposed/);
    expect(fake.requests).toHaveLength(1);

    const reject = runCharter(["healer", "reject", id.slice(0, 8), "--reason", "fix by hand", "--project", other], { cwd: root });
    expect(reject.status).toBe(0);
    expect(reject.stdout).toContain("[healer:rejected]");
    expect(runCharter(["healer", "tickets", "--status", "rejected", "--project", other], { cwd: root }).stdout).toContain(id.slice(0, 8));
    // The owner may ask again about a rejected ticket too (here without a provider: it fails at once).
    expect(runCharter(["healer", "retry", id.slice(0, 8), "--project", other], { cwd: root }).stdout).toMatch(/: failed \(no LLM provider/);
    expect(fake.requests).toHaveLength(1);

    // The tier 1 project: fixed, then visible in status and history.
    expect(runCharter(["healer", "fix"], { cwd: root }).status).toBe(0);
    const status = JSON.parse(runCharter(["healer", "status", "--format", "json"], { cwd: root }).stdout) as {
      queue: Record<string, number>;
      total: number;
      success_rate: Record<string, number>;
    };
    expect(status.queue.applied).toBe(1);
    expect(status.total).toBe(1);
    expect(status.success_rate.tier_1).toBe(1);
    const text = runCharter(["healer", "status"], { cwd: root }).stdout;
    expect(text).toMatch(/applied\s+1/);
    expect(text).toMatch(/total\s+1/);
    const history = runCharter(["healer", "history"], { cwd: root });
    expect(history.stdout).toMatch(/^\d{4}-\d{2}-\d{2}T\S+\s+entity\/shop\/\w+\s+1 change\(s\)\s+compatible\s+graph_edge: /m);
    const filtered = JSON.parse(
      runCharter(["healer", "tickets", "--priority", "low", "--format", "json"], { cwd: root }).stdout,
    ) as unknown[];
    expect(filtered).toHaveLength(1);
    expect(runCharter(["healer", "tickets", "--priority", "urgent"], { cwd: root }).status).toBe(2);
  });
});

describe("charter healer serve and --format", () => {
  it("serves the project, refuses a second service on the same store, and stops on SIGTERM", async () => {
    const root = makeProject(brokenExamples()[0]?.dir);
    const first = await startHealerProcess(root, NO_PROVIDER_ENV);
    const url = first.url;
    try {
      expect(first.output()).toContain("proposer: no LLM provider is configured");
      expect(first.output()).toContain("tickets read and decided only from this machine, same origin");
      expect(await (await fetch(`${url}/healer/health`)).json()).toEqual({ status: "ok", service: "healer" });

      const second = await startHealerProcess(root, NO_PROVIDER_ENV, { expectFailure: true });
      expect(await second.exited).toBe(1);
      expect(second.output()).toMatch(/another Healer service is already serving/);

      // CLI commands still work beside the running service.
      const tickets = runCharter(["healer", "tickets", "--format", "json"], { cwd: root });
      expect(tickets.status).toBe(0);
      expect(JSON.parse(tickets.stdout)).toEqual([]);
      const status = runCharter(["healer", "status", "--format", "json"], { cwd: root });
      expect(JSON.parse(status.stdout)).toMatchObject({ total: 0 });
      expect(runCharter(["healer", "status", "--format", "yaml"], { cwd: root }).status).toBe(2);

      expect(await first.stop()).toBe(0);
    } finally {
      // A failed expectation must not leave the service running.
      await first.stop();
    }
  });
});
