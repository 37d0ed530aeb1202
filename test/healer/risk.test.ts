import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { needsConfirmation, type RiskFinding, reviewContractRisk } from "../../src/healer/proposal/risk.js";
import { REPO_ROOT } from "../support/cli.js";

/**
 * The weakening replies of issue 39, made from examples/helpdesk's contracts by editing their
 * text as a model would: each must be caught with its level and located in the proposed text.
 */
const HELPDESK = join(REPO_ROOT, "examples", "helpdesk");

function review(rel: string, edit: (source: string) => string): { findings: RiskFinding[]; after: string } {
  const before = readFileSync(join(HELPDESK, rel), "utf8");
  const after = edit(before);
  expect(after).not.toBe(before);
  return { findings: reviewContractRisk(parse(before), parse(after), `domains/helpdesk/${rel}`, after), after };
}

/** The 1-based line of the first occurrence of `text` in `source`. */
const lineOf = (source: string, text: string): number => source.slice(0, source.indexOf(text)).split("\n").length;

describe("the contract risk review catches each weakening by meaning", () => {
  it("an entity losing a field's constraints and immutable: weakens, located at the field", () => {
    const { findings, after } = review("entities/ticket.contract.yaml", (s) =>
      s
        .replace("      constraints:\n        minLength: 3\n        maxLength: 200\n", "")
        .replace("    reporter_email:\n      type: email\n      immutable: true\n", "    reporter_email:\n      type: email\n"),
    );
    const constraints = findings.find((f) => f.id === "field.constraints:/spec/fields/title/constraints");
    expect(constraints).toMatchObject({
      level: "weakens",
      path: "/spec/fields/title",
      file: "domains/helpdesk/entities/ticket.contract.yaml",
    });
    expect(constraints?.message).toContain("minLength 3");
    expect(constraints?.line).toBe(lineOf(after, "    title:") + 1);
    const immutable = findings.find((f) => f.id === "field.immutable:/spec/fields/reporter_email/immutable");
    expect(immutable).toMatchObject({ level: "weakens", path: "/spec/fields/reporter_email" });
    expect(immutable?.message).toBe("makes `ticket.reporter_email` changeable after creation (it was immutable)");
    expect(immutable?.line).toBe(lineOf(after, "    reporter_email:") + 1);
    expect(findings).toHaveLength(2);
    expect(needsConfirmation(findings)).toHaveLength(2);
  });

  it("a loosened bound, a widened enum, a removed field and on_delete cascade", () => {
    const { findings } = review("entities/ticket.contract.yaml", (s) =>
      s
        .replace("        min: 0\n        max: 1000", "        min: 0\n        max: 100000")
        .replace("enum: [low, medium, high, critical]", "enum: [low, medium, high, critical, urgent]")
        .replace("    due_date:\n      type: date\n", "")
        .replace(
          "        display: name\n        graph_edge: RAISED_BY",
          "        display: name\n        on_delete: cascade\n        graph_edge: RAISED_BY",
        ),
    );
    expect(findings.map((f) => [f.level, f.id])).toEqual([
      ["destroys data", "field.removed:/spec/fields/due_date"],
      ["destroys data", "reference.on_delete:/spec/fields/customer_id/references/on_delete"],
      ["weakens", "enum.widened:/spec/fields/priority/enum"],
      ["weakens", "constraint.loosened:/spec/fields/estimate_hours/constraints/max"],
    ]);
    expect(findings[0]?.path).toBe("/spec/fields");
    expect(findings[3]?.message).toBe("loosens max of `ticket.estimate_hours` from 1000 to 100000");
  });

  it("a Route losing its POST rule, with escalated and resolution made writable", () => {
    const { findings, after } = review("routes/ticket_api.contract.yaml", (s) =>
      s
        .replace(/ {6}validation:\n {8}- rule: "priority != 'critical' or len\(description\) >= 20"\n(?: {10}.*\n)+/, "")
        .replace(
          "optional_fields: [description, priority, type, assignee_id, reporter_email, due_date]",
          "optional_fields: [description, priority, type, assignee_id, reporter_email, due_date, escalated, resolution]",
        ),
    );
    expect(findings.map((f) => [f.level, f.message])).toEqual([
      ["weakens", "removes the POST rule `priority != 'critical' or len(description) >= 20` of POST /tickets"],
      ["weakens", "makes `escalated` writable through POST /tickets by roles admin, agent"],
      ["weakens", "makes `resolution` writable through POST /tickets by roles admin, agent"],
    ]);
    const rule = findings[0] as RiskFinding;
    expect(rule.path).toBe("/spec/endpoints/2");
    expect(rule.line).toBe(lineOf(after, "    - method: POST"));
    const writable = findings[1] as RiskFinding;
    expect(writable.path).toBe("/spec/endpoints/2/request_body/optional_fields");
    expect(writable.line).toBe(lineOf(after, "optional_fields: [description"));
  });

  it("an agent whose updates are widened and whose threshold is 0", () => {
    const { findings, after } = review("agents/triage_agent.contract.yaml", (s) =>
      s.replace("updates: [priority, type]", "updates: [priority, type, resolution, escalated]").replace("threshold: 0.8", "threshold: 0"),
    );
    expect(findings.map((f) => [f.level, f.id, f.line])).toEqual([
      ["weakens", "agent.updates:/spec/output/updates", lineOf(after, "updates:")],
      ["weakens", "agent.threshold:/spec/threshold", lineOf(after, "threshold:")],
    ]);
    expect(findings[0]?.message).toBe("lets the agent write `resolution`, `escalated`");
    expect(findings[1]?.message).toContain("from 0.8 to 0");
  });

  it("a workflow with a new transition new -> closed, and a guard dropped", () => {
    const { findings, after } = review("workflows/ticket_lifecycle.contract.yaml", (s) =>
      s
        .replace("    new: [triaged, cancelled]", "    new: [triaged, cancelled, closed]")
        .replace('    "resolved -> closed":\n      condition: "priority != \'critical\' or escalated == true"\n', ""),
    );
    expect(findings.map((f) => [f.level, f.message, f.path])).toEqual([
      ["weakens", "adds the transition `new -> closed`", "/spec/transitions/new"],
      ["weakens", "removes the guard of `resolved -> closed`", "/spec/guards"],
    ]);
    expect(findings[0]?.line).toBe(lineOf(after, "    new: [triaged, cancelled, closed]"));
    expect(findings[0]?.column).toBe(10);
  });

  it("roles widened, an endpoint removed (breaks clients) and an unchanged contract (nothing)", () => {
    const { findings } = review("routes/ticket_api.contract.yaml", (s) =>
      s
        .replace("      summary: Delete a ticket\n      roles: [admin]\n", "      summary: Delete a ticket\n      roles: [admin, agent]\n")
        .replace(/ {4}- method: PUT\n(?: {6}.*\n)+/, ""),
    );
    expect(findings.map((f) => [f.level, f.message])).toEqual([
      ["breaks clients", "removes the endpoint PUT /tickets/{id}/state"],
      ["weakens", "opens DELETE /tickets/{id} to agent"],
    ]);
    const same = readFileSync(join(HELPDESK, "entities/ticket.contract.yaml"), "utf8");
    expect(reviewContractRisk(parse(same), parse(same), "x", same)).toEqual([]);
  });
});
