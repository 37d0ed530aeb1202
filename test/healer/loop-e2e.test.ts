import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ticket } from "../../src/healer/index.js";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { REPO_ROOT } from "../support/cli.js";
import { FakeLlm } from "../support/fake-llm.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { makeProject } from "./helpers.js";
import { type HealerProcess, startHealerProcess } from "./serve-process.js";

/*
 * The loop as a user runs it: `charter healer serve` beside the generated helpdesk app (uvicorn,
 * PostgreSQL) started with SVC_HEALER_URL. A table goes missing under the running app, a request
 * fails with 500, and the error arrives in the Healer as a ticket with the request's path, method
 * and status, the entity's FQN, and (with the fake LLM as provider) a proposal whose notification
 * links to the view page.
 */

let fake: FakeLlm;
let healer: HealerProcess;
let healerUrl = "";
const healerLog = (): string => healer?.output() ?? "";
let app: RunningBackend;
let root: string;
let db: string;

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out; Healer log:\n${healerLog()}\napp log:\n${app?.logs()}`);
}

beforeAll(async () => {
  fake = await FakeLlm.start();
  root = makeProject(join(REPO_ROOT, "examples", "helpdesk"), "helpdesk");
  healer = await startHealerProcess(root, fake.env());
  healerUrl = healer.url;
  db = freshDatabase("charter_healer_loop_9");
  app = await startGeneratedBackend({
    domainDir: join(root, "domains", "helpdesk"),
    outDir: join(root, "runtime"),
    backend: "postgres",
    databaseUrl: databaseUrl(db),
    env: { SVC_HEALER_URL: healerUrl, AUTH_ENABLED: "false" },
  });
}, 600_000);

afterAll(async () => {
  await app?.stop();
  await healer?.stop();
  await fake?.close();
});

describe("generated app -> Healer", () => {
  it("an unhandled error in the running app becomes a ticket with path, method and status, and a proposal to review", async () => {
    const customer = readFileSync(join(root, "domains/helpdesk/entities/customer.contract.yaml"), "utf8");
    fake.reply({
      json: {
        contract: customer.replace(/^(\s+description: )(.*)$/m, "$1$2 (checked after a runtime failure)"),
        explanation: "The table was missing; the contract itself is sound, so only its description notes the incident.",
      },
    });
    const ok = await fetch(`${app.url}/customers/`);
    expect(ok.status).toBe(200);

    psql(db, "DROP TABLE customers CASCADE;");
    const failing = await fetch(`${app.url}/customers/?limit=5`);
    expect(failing.status).toBe(500);
    const body = (await failing.json()) as { error: string };
    expect(body.error).toBe("internal_error");

    const ticket = await eventually(async () => {
      const list = (await (await fetch(`${healerUrl}/healer/tickets?contract_fqn=entity/helpdesk/customer`)).json()) as Ticket[];
      const t = list[0];
      return t && t.status !== "queued" && t.status !== "analyzing" ? t : undefined;
    });
    expect(ticket).toMatchObject({
      source: "runtime",
      contract_fqn: "entity/helpdesk/customer",
      error_type: "runtime_500",
      tier: 3,
      priority: "critical",
      status: "proposed",
      context: {
        path: "/customers/",
        request_path: "/customers/",
        method: "GET",
        status_code: 500,
        route_fqn: "route/helpdesk/customer_api",
      },
    });
    expect(ticket.raw_error).toMatch(/customers/);
    expect(String(ticket.context.stacktrace)).toContain("Traceback");
    expect(ticket.proposal).toMatchObject({ method: "llm_runtime", confidence: 0.5 });
    // The prompt carried the runtime error and the request it came from.
    expect(fake.userPrompt(0)).toContain("status_code: 500");
    expect(fake.userPrompt(0)).toContain("method: GET");
    // The Route that served the request comes with the entity, as a referenced contract.
    expect(fake.userPrompt(0)).toContain("### route/helpdesk/customer_api");

    const notifications = readFileSync(join(root, ".forge/healer/notifications.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; message: string; ticket_id: string });
    const proposed = notifications.find((n) => n.event === "proposed" && n.ticket_id === ticket.id);
    expect(proposed?.message).toContain(`${healerUrl}/healer/tickets/${ticket.id}/view`);

    // The same failure again adds an occurrence instead of a ticket.
    expect((await fetch(`${app.url}/customers/?limit=5`)).status).toBe(500);
    const again = await eventually(async () => {
      const t = (await (await fetch(`${healerUrl}/healer/tickets/${ticket.id}`)).json()) as Ticket;
      return t.occurrences === 2 ? t : undefined;
    });
    expect(again.status).toBe("proposed");
    const view = await (await fetch(`${healerUrl}/healer/tickets/${ticket.id}/view`)).text();
    expect(view).toContain("/customers/");
    expect(view).toContain('id="approve"');
  });
});
