import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import type { Ticket } from "../../src/healer/index.js";
import type { RiskFinding } from "../../src/healer/proposal/risk.js";
import { launchChromium } from "../support/chromium.js";
import { REPO_ROOT } from "../support/cli.js";
import { FakeLlm } from "../support/fake-llm.js";
import { makeProject, runCharterAsync } from "./helpers.js";
import { type HealerProcess, startHealerProcess } from "./serve-process.js";

/*
 * Issue 39's weakening replies, each the answer of an OpenAI-compatible fake to a runtime report
 * filed with a real `charter healer serve` (no token, SQLite file) on examples/helpdesk: every one
 * becomes a proposal whose risk findings are stored with the ticket, listed first on its page
 * (Chromium reads the DOM), and refused approval until each finding is confirmed by name, over
 * HTTP, through the page's form and by `charter healer approve` without `--accept-risk`.
 */

const ENV = { SVC_HEALER_LLM_CALLS_PER_MINUTE: "100", SVC_HEALER_LLM_CALLS_PER_ERROR: "100", HEALER_DATABASE_URL: "" };

interface Weakening {
  fqn: string;
  file: string;
  /** How the report reaches this contract: a runtime error on /tickets, or a real validation error. */
  report: { trace?: string } | { broken: [string, string] };
  edit: (s: string) => string;
  /** The ids of the findings that must be caught, in the order listed. */
  expected: string[];
}

const WEAKENINGS: Record<string, Weakening> = {
  entity: {
    fqn: "entity/helpdesk/ticket",
    file: "entities/ticket.contract.yaml",
    report: {},
    edit: (s) =>
      s
        .replace("      constraints:\n        minLength: 3\n        maxLength: 200\n", "")
        .replace("    reporter_email:\n      type: email\n      immutable: true\n", "    reporter_email:\n      type: email\n"),
    expected: ["field.constraints:/spec/fields/title/constraints", "field.immutable:/spec/fields/reporter_email/immutable"],
  },
  route: {
    fqn: "route/helpdesk/ticket_api",
    file: "routes/ticket_api.contract.yaml",
    // A Route's rule that raised: the trace's frame in app/rules.py makes the Route the culprit.
    report: { trace: 'Traceback (most recent call last):\n  File "/app/app/rules.py", line 12, in enforce\nKeyError' },
    edit: (s) =>
      s
        .replace(/ {6}validation:\n {8}- rule: "priority != 'critical' or len\(description\) >= 20"\n(?: {10}.*\n)+/, "")
        .replace("reporter_email, due_date]", "reporter_email, due_date, escalated, resolution]"),
    expected: [
      "validation.removed:/spec/endpoints/2/validation#priority != 'critical' or len(description) >= 20",
      "field.writable:/spec/endpoints/2/request_body/optional_fields#escalated",
      "field.writable:/spec/endpoints/2/request_body/optional_fields#resolution",
    ],
  },
  agent: {
    fqn: "agent/helpdesk/triage_agent",
    file: "agents/triage_agent.contract.yaml",
    report: { broken: ["updates: [priority, type]", "updates: [priority, type, urgency]"] },
    edit: (s) =>
      s.replace("updates: [priority, type]", "updates: [priority, type, resolution, escalated]").replace("threshold: 0.8", "threshold: 0"),
    expected: ["agent.updates:/spec/output/updates", "agent.threshold:/spec/threshold"],
  },
  workflow: {
    fqn: "workflow/helpdesk/ticket_lifecycle",
    file: "workflows/ticket_lifecycle.contract.yaml",
    report: { broken: ["    new: [triaged, cancelled]", "    new: [triaged, cancelled, archived]"] },
    edit: (s) => s.replace("    new: [triaged, cancelled]", "    new: [triaged, cancelled, closed]"),
    // The error fixed (archived was no state) is a removed transition: listed, as info.
    expected: ["transition.added:/spec/transitions/new#closed", "transition.removed:/spec/transitions/new#new->archived"],
  },
};

let fake: FakeLlm;
let browser: Browser;
let proc: HealerProcess;
let root: string;
const contractPath = (w: Weakening): string => join(root, "domains", "helpdesk", w.file);
beforeAll(async () => {
  fake = await FakeLlm.start();
  browser = await launchChromium();
  root = makeProject(join(REPO_ROOT, "examples", "helpdesk"), "helpdesk");
  proc = await startHealerProcess(root, { ...fake.env(), ...ENV });
}, 60_000);
afterAll(async () => {
  await proc?.stop();
  await browser?.close();
  await fake?.close();
});

/** The model's reply: the contract as it was in the example (its error fixed), then weakened. */
async function propose(name: string): Promise<Ticket> {
  const w = WEAKENINGS[name] as Weakening;
  fake.reset();
  const original = readFileSync(contractPath(w), "utf8");
  // Agents and workflows are reached by validation reports: each gets a real error to be fixed,
  // written only now (a domain that does not compile would map no request path to its Route).
  if ("broken" in w.report && !original.includes(w.report.broken[1]))
    writeFileSync(contractPath(w), original.replace(w.report.broken[0], w.report.broken[1]));
  const fixed = "broken" in w.report ? original.replace(w.report.broken[1], w.report.broken[0]) : original;
  fake.reply({ json: { contract: w.edit(fixed), explanation: "A small, safe clean-up of the contract." } });
  let report: unknown;
  if ("broken" in w.report) {
    const file = `domains/helpdesk/${w.file}`;
    const finding = checkDomain(join(root, "domains")).findings.find((f) => f.severity === "error" && f.file.endsWith(w.file));
    report = { source: "validation", contract_fqn: w.fqn, error: finding?.message, context: { source_path: file } };
  } else {
    const context = { status_code: 500, path: "/tickets", method: "POST" };
    report = { source: "runtime", error: `KeyError: '${name}_risk'`, stacktrace: w.report.trace, context };
  }
  const r = await fetch(`${proc.url}/healer/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(report),
  });
  const body = (await r.json()) as { ticket_id: string; status: string };
  // One ticket per error: a case before this one rejected the same error's ticket; the owner asks again.
  if (body.status === "rejected") {
    const again = await fetch(`${proc.url}/healer/retry/${body.ticket_id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(again.status, proc.output()).toBe(200);
    expect(((await again.json()) as { status: string }).status).toBe("proposed");
  } else expect(body.status, proc.output()).toBe("proposed");
  return (await (await fetch(`${proc.url}/healer/tickets/${body.ticket_id}`)).json()) as Ticket;
}

const approve = (id: string, body: unknown) =>
  fetch(`${proc.url}/healer/approve/${id}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("each weakening reply is caught, shown first and needs its confirmation", () => {
  it.each(Object.keys(WEAKENINGS))(
    "%s: findings stored, listed before the diff, approval refused without them",
    async (name) => {
      const w = WEAKENINGS[name] as Weakening;
      const t = await propose(name);
      const risk = t.proposal?.risk as RiskFinding[];
      // The contract review's findings; the plan's facts (plan engine, consequences-e2e.test.ts)
      // are merged into the same list.
      const review = risk.filter((f) => !/^(plan|api|migration)\./.test(f.id));
      expect(review.map((f) => f.id)).toEqual(w.expected);
      expect(t.proposal?.plan).toBeDefined();
      // The console notification of the proposal carries the same list.
      const line =
        proc
          .output()
          .split("\n")
          .find((l) => l.startsWith(`[healer:proposed] ${t.id.slice(0, 8)}`)) ?? "";
      expect(line).toContain(`approving it: [${(risk[0] as RiskFinding).level}] ${(risk[0] as RiskFinding).message}`);
      const confirm = risk.filter((f) => f.level !== "info").map((f) => f.id);
      expect(confirm.length).toBeGreaterThan(0);
      for (const f of review)
        expect(f).toMatchObject({ level: confirm.includes(f.id) ? "weakens" : "info", file: `domains/helpdesk/${w.file}` });

      const page = await browser.newPage();
      try {
        await page.goto(`${proc.url}/healer/tickets/${t.id}/view`);
        const order = await page.evaluate(() => {
          const c = document.querySelector("#consequences");
          const d = document.querySelector("#diff");
          const first = document.querySelector("#consequences li");
          return {
            before: !!c && !!d && (c.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
            beforeDecision:
              !!c && (c.compareDocumentPosition(document.querySelector("#decision") as Node) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
            ids: [...document.querySelectorAll("#consequences li")].map((li) => li.getAttribute("data-id")),
            first: first?.textContent ?? "",
            boxes: [...document.querySelectorAll<HTMLInputElement>("#accept-risk input[name=accept_risk]")].map((b) => b.value),
          };
        });
        expect(order).toMatchObject({ before: true, beforeDecision: true, ids: risk.map((f) => f.id), boxes: confirm });
        for (const id of w.expected) expect(order.ids).toContain(id);
        expect(order.first).toContain((risk[0] as RiskFinding).message);
      } finally {
        await page.close();
      }

      // Over HTTP: nothing accepted, then all but one: refused with the missing finding named.
      const none = await approve(t.id, {});
      expect(none.status).toBe(400);
      const refusal = (await none.json()) as { error: string; message: string };
      expect(refusal.error).toBe("risk_not_accepted");
      for (const id of confirm) expect(refusal.message).toContain(id);
      const partial = await approve(t.id, { accept_risk: confirm.slice(1) });
      expect(partial.status).toBe(400);
      expect(((await partial.json()) as { message: string }).message).toContain(confirm[0]);
      const still = (await (await fetch(`${proc.url}/healer/tickets/${t.id}`)).json()) as Ticket;
      expect(still.status).toBe("proposed");
      // Reject it, so the next case starts from the unchanged contract.
      const rej = await fetch(`${proc.url}/healer/reject/${t.id}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(rej.status).toBe(200);
    },
    120_000,
  );

  it("the page's form: unticked is refused by the server; ticking each finding in Chromium applies it", async () => {
    const w = WEAKENINGS.agent as Weakening;
    const t = await propose("agent");
    // A form post that skips the checkboxes (the browser's `required` is only a convenience).
    const skipped = await fetch(`${proc.url}/healer/approve/${t.id}/action`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
      redirect: "manual",
    });
    expect(skipped.status).toBe(303);
    expect(skipped.headers.get("location")).toContain("done=risk-not-accepted");
    expect(((await (await fetch(`${proc.url}/healer/tickets/${t.id}`)).json()) as Ticket).status).toBe("proposed");

    const page = await browser.newPage();
    try {
      page.setDefaultTimeout(60_000);
      await page.goto(`${proc.url}/healer/tickets/${t.id}/view?done=risk-not-accepted`);
      expect(await page.textContent("body")).toContain("Not approved: tick every finding");
      for (const box of await page.$$("#accept-risk input[name=accept_risk]")) await box.check();
      await Promise.all([page.waitForURL(/done=/), page.click("#approve")]);
      expect(page.url()).toContain("done=applied");
    } finally {
      await page.close();
    }
    expect(readFileSync(contractPath(w), "utf8")).toContain("threshold: 0\n");
  }, 180_000);

  it("charter healer approve refuses without --accept-risk and says why; with it, the fix applies", async () => {
    const w = WEAKENINGS.workflow as Weakening;
    const t = await propose("workflow");
    const env = { ...fake.env(), ...ENV };
    // `healer show`, where the refusal sends the reader, lists the consequences with their ids.
    const shown = await runCharterAsync(["healer", "show", t.id, "--project", root], { cwd: root, env });
    expect(shown.stdout).toMatch(
      /^consequences\n {2}transition\.added:\/spec\/transitions\/new#closed\n {4}\[weakens\] adds the transition `new -> closed`$/m,
    );
    const refused = await runCharterAsync(["healer", "approve", t.id, "--project", root], { cwd: root, env });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("transition.added:/spec/transitions/new#closed");
    expect(refused.stderr).toContain("adds the transition `new -> closed`");
    expect(refused.stderr).toContain("--accept-risk");
    expect(((await (await fetch(`${proc.url}/healer/tickets/${t.id}`)).json()) as Ticket).status).toBe("proposed");
    const ok = await runCharterAsync(["healer", "approve", t.id, "--project", root, "--accept-risk"], { cwd: root, env });
    expect(ok.stdout + ok.stderr).toContain(": applied");
    expect(ok.status).toBe(0);
    expect(readFileSync(contractPath(w), "utf8")).toContain("new: [triaged, cancelled, closed]");
  }, 240_000);
});
