import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { mergeConsequences, planConsequences, planProposal } from "../../src/healer/proposal/consequences.js";
import { generateBackend } from "../support/backend.js";
import { REPO_ROOT } from "../support/cli.js";
import { makeProject } from "./helpers.js";

/*
 * The plan of a proposal when the rows cannot be counted, or no plan can be made: the consequences
 * say so and why, instead of a figure (consequences-e2e.test.ts counts them on a real database).
 */

let root: string;
const customer = (): string => join(root, "domains/helpdesk/entities/customer.contract.yaml");
const withoutWebsite = (): string => readFileSync(customer(), "utf8").replace("    website:\n      type: string\n      format: uri\n", "");
const input = (env: NodeJS.ProcessEnv) => ({
  root,
  scanRoot: join(root, "domains"),
  targetAbs: customer(),
  after: withoutWebsite(),
  runtimeDir: join(root, "runtime"),
  env,
});

beforeAll(() => {
  root = makeProject(join(REPO_ROOT, "examples", "helpdesk"), "helpdesk");
  generateBackend(join(root, "domains", "helpdesk"), join(root, "runtime"));
});

describe("rows unknown, plan unavailable", () => {
  it("no database named: the dropped column says rows unknown and which setting to set", async () => {
    const pp = await planProposal(input({}));
    expect(pp.compared_with).toBe("runtime");
    expect(pp.rows_unknown).toBe("the Healer does not know the app's database (set SVC_HEALER_APP_DATABASE_URL)");
    const [first] = mergeConsequences(planConsequences(pp, "domains/helpdesk/entities/customer.contract.yaml"), []);
    expect(first).toMatchObject({
      id: "migration.drop_column:customers.website",
      level: "destroys data",
      message: `drops column \`customers.website\` — rows unknown: ${pp.rows_unknown}`,
    });
    // Located on the statement's line in the planned migration.
    const lines = (pp.migration_sql ?? "").split("\n");
    expect(lines[(first?.line ?? 0) - 1]).toContain("DROP COLUMN");
  }, 120_000);

  it("an unreachable database: rows unknown with the reason, the URL's password never shown", async () => {
    const pp = await planProposal(input({ SVC_HEALER_APP_DATABASE_URL: "postgresql://app:pw-s3cret-x@127.0.0.1:1/app" }));
    expect(pp.rows_unknown).toMatch(/^the app's database postgresql:\/\/app:\*\*\*@127\.0\.0\.1:1\/app could not be asked: /);
    expect(JSON.stringify(pp)).not.toContain("pw-s3cret-x");
    expect(pp.plan?.migration?.destructive[0]?.rows).toBeUndefined();
  }, 120_000);

  it("nothing generated and the current contracts broken: not planned, said as an info line", async () => {
    const broken = makeProject(join(REPO_ROOT, "examples", "helpdesk"), "helpdesk");
    const agent = join(broken, "domains/helpdesk/agents/triage_agent.contract.yaml");
    const text = readFileSync(agent, "utf8");
    writeFileSync(agent, text.replace("updates: [priority, type]", "updates: [priority, type, urgency]"));
    const pp = await planProposal({
      root: broken,
      scanRoot: join(broken, "domains"),
      targetAbs: agent,
      after: text,
      runtimeDir: join(broken, "runtime"),
      env: {},
    });
    expect(pp).toMatchObject({ compared_with: "contracts", plan: null });
    expect(pp.error).toBe("no generated app to compare with, and the current contracts do not compile");
    expect(planConsequences(pp, "x.yaml")).toEqual([
      expect.objectContaining({ id: "plan.unavailable", level: "info", message: `not planned: ${pp.error}` }),
    ]);
  }, 120_000);
});
