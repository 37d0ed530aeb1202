import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCharter } from "../support/cli.js";
import { brokenExamples, listFiles, makeProject, TIER1 } from "./helpers.js";

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
  it.each(brokenExamples())("$type ($origin)", ({ type, dir }) => {
    const root = makeProject(dir, type);
    const files = listFiles(join(root, "domains"));
    const before = new Map(files.map((f) => [f, readFileSync(join(root, "domains", f), "utf8")]));
    const r = runCharter(["healer", "fix"], { cwd: root });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const c = counts(r.stdout);
    expect(c.errors).toBeGreaterThanOrEqual(1);
    expect(c.warnings).toBeGreaterThanOrEqual(0);
    expect(c.tickets).toBe(c.errors);
    expect(r.stdout).toContain("[healer:queued]");
    const tickets = JSON.parse(runCharter(["healer", "tickets", "--output", "json"], { cwd: root }).stdout) as {
      error_type: string;
      status: string;
    }[];
    expect(tickets.map((t) => t.error_type)).toContain(type);
    if (TIER1.has(type)) {
      expect(c).toMatchObject({ applied: c.tickets, awaiting: 0, remaining: 0 });
      expect(r.stdout).toContain("[healer:applied]");
      expect(runCharter(["forge", "validate", "domains"], { cwd: root }).status).toBe(0);
      expect(listFiles(join(root, "runtime")).length).toBeGreaterThan(0);
      expect(listFiles(join(root, ".forge", "diffs")).length).toBeGreaterThan(0);
    } else {
      expect(c).toMatchObject({ applied: 0, awaiting: c.tickets });
      expect(c.remaining).toBeGreaterThanOrEqual(1);
      for (const [f, text] of before) expect(readFileSync(join(root, "domains", f), "utf8")).toBe(text);
      expect(tickets.every((t) => t.status === "queued")).toBe(true);
    }
  });
});

describe("charter healer commands", () => {
  it("show, status, tickets, reject, approve, retry and history move and show tickets", () => {
    const examples = new Map(brokenExamples().map((e) => [e.type, e.dir]));
    const root = makeProject(examples.get("graph_edge"), "shop");
    // A second domain folder with a tier 2 error, scanned through --project from elsewhere.
    const other = makeProject(examples.get("invalid_enum"), "shop");
    const fix = runCharter(["healer", "fix", "--project", other], { cwd: root });
    expect(fix.status).toBe(0);
    expect(counts(fix.stdout)).toMatchObject({ applied: 0, awaiting: 1 });

    const list = JSON.parse(runCharter(["healer", "tickets", "--project", other, "--output", "json"], { cwd: root }).stdout) as {
      id: string;
    }[];
    expect(list).toHaveLength(1);
    const id = (list[0] as { id: string }).id;

    const show = runCharter(["healer", "show", id.slice(0, 6), "--project", other], { cwd: root });
    expect(show.status).toBe(0);
    expect(show.stdout).toMatch(/error type\s+invalid_enum/);
    expect(show.stdout).toContain("awaiting an LLM proposer (none configured)");

    const short = runCharter(["healer", "show", id.slice(0, 3), "--project", other], { cwd: root });
    expect(short.status).toBe(1);
    expect(short.stderr).toMatch(/too short: give at least 4 characters/);
    expect(runCharter(["healer", "show", "0000aaaa", "--project", other], { cwd: root }).stderr).toMatch(/no ticket with id or prefix/);

    const approve = runCharter(["healer", "approve", id.slice(0, 8), "--project", other], { cwd: root });
    expect(approve.status).toBe(1);
    expect(approve.stderr).toMatch(/is queued; only a proposed ticket can be approved/);

    const reject = runCharter(["healer", "reject", id.slice(0, 8), "--reason", "fix by hand", "--project", other], { cwd: root });
    expect(reject.status).toBe(0);
    expect(reject.stdout).toContain("[healer:rejected]");
    expect(runCharter(["healer", "tickets", "--status", "rejected", "--project", other], { cwd: root }).stdout).toContain(id.slice(0, 8));
    expect(runCharter(["healer", "retry", id.slice(0, 8), "--project", other], { cwd: root }).stderr).toMatch(
      /only a failed ticket can be retried/,
    );

    // The tier 1 project: fixed, then visible in status and history.
    expect(runCharter(["healer", "fix"], { cwd: root }).status).toBe(0);
    const status = JSON.parse(runCharter(["healer", "status", "--output", "json"], { cwd: root }).stdout) as {
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
      runCharter(["healer", "tickets", "--priority", "low", "--output", "json"], { cwd: root }).stdout,
    ) as unknown[];
    expect(filtered).toHaveLength(1);
    expect(runCharter(["healer", "tickets", "--priority", "urgent"], { cwd: root }).status).toBe(2);
  });
});
