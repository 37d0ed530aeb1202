import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ticket } from "../../src/healer/index.js";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { REPO_ROOT } from "../support/cli.js";
import { FakeLlm } from "../support/fake-llm.js";
import { databaseUrl, freshDatabase, PG_HOST, PG_PORT, PG_USER, psql } from "../support/postgres.js";
import { listFiles, makeProject } from "./helpers.js";
import { type HealerProcess, startHealerProcess } from "./serve-process.js";

/*
 * The loop as a user runs it: `charter healer serve` beside the generated helpdesk app (uvicorn,
 * PostgreSQL) started with SVC_HEALER_URL. A constraint the contracts do not know appears under
 * the running app, creates fail with 500, and the errors arrive in the Healer as one ticket with
 * the request's path, method and status, the entity's FQN, (with the fake LLM as provider) a
 * proposal whose notification links to the view page, and none of the rows' values. A column
 * dropped under the app is database drift.
 */

describe.each(["sqlite", "postgres"] as const)("generated app -> Healer (%s ticket store)", (store) => {
  let fake: FakeLlm;
  let healer: HealerProcess;
  let healerUrl = "";
  const healerLog = (): string => healer?.output() ?? "";
  let app: RunningBackend;
  let root: string;
  let db: string;
  /** The ticket store's own database, on the PostgreSQL store. */
  let ticketDb = "";

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
    const env: Record<string, string> = { ...fake.env() };
    if (store === "postgres") {
      ticketDb = freshDatabase("charter_healer_loop_tickets");
      env.HEALER_DATABASE_URL = databaseUrl(ticketDb);
    }
    healer = await startHealerProcess(root, env);
    healerUrl = healer.url;
    db = freshDatabase(`charter_healer_loop_${store}`);
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

  it("the same failure with 50 different rows is one ticket with 50 occurrences, a proposal to review, and no row value stored", async () => {
    const customer = readFileSync(join(root, "domains/helpdesk/entities/customer.contract.yaml"), "utf8");
    fake.reply({
      json: {
        contract: customer.replace(/^(\s+description: )(.*)$/m, "$1$2 (checked after a runtime failure)"),
        explanation: "The database refuses these e-mail addresses; the contract notes the incident in its description.",
      },
    });
    const create = (i: number) =>
      fetch(`${app.url}/customers/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: `Zelda Quark${i}`, email: `zelda.quark${i}@example.com`, company: `Quarkworks${i}` }),
      });
    expect((await create(100)).status).toBe(201);

    // A constraint the contracts do not know: PostgreSQL's own message quotes the whole failing row.
    psql(db, "ALTER TABLE customers ADD CONSTRAINT customers_no_example CHECK (email NOT LIKE '%@example.com') NOT VALID;");
    const failing = await create(0);
    expect(failing.status).toBe(500);
    expect(((await failing.json()) as { error: string }).error).toBe("internal_error");

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
        method: "POST",
        status_code: 500,
        route_fqn: "route/helpdesk/customer_api",
      },
    });
    // What classifies the error stays: the exception, the relation and the constraint.
    expect(ticket.raw_error).toContain(
      'CheckViolationError: new row for relation "customers" violates check constraint "customers_no_example"',
    );
    expect(String(ticket.context.stacktrace)).toContain("Traceback");
    expect(ticket.proposal).toMatchObject({ method: "llm_runtime", confidence: 0.5 });
    // The prompt carried the runtime error and the request it came from, without the row.
    expect(fake.userPrompt(0)).toContain("status_code: 500");
    expect(fake.userPrompt(0)).toContain("method: POST");
    expect(fake.userPrompt(0)).not.toMatch(/zelda|quark/i);
    // The Route that served the request comes with the entity, as a referenced contract.
    expect(fake.userPrompt(0)).toContain("### route/helpdesk/customer_api");

    for (let i = 1; i < 50; i++) expect((await create(i)).status).toBe(500);
    const all = await eventually(async () => {
      const t = (await (await fetch(`${healerUrl}/healer/tickets/${ticket.id}`)).json()) as Ticket;
      return t.occurrences === 50 ? t : undefined;
    });
    expect(all.status).toBe("proposed");
    const list = (await (await fetch(`${healerUrl}/healer/tickets`)).json()) as Ticket[];
    expect(list.map((t) => t.id)).toEqual([ticket.id]);
    expect(fake.requests).toHaveLength(1);

    // No row value anywhere: the ticket, the view page, the store's files, the notifications.
    const leaked = /zelda|quark/i;
    expect(JSON.stringify(all)).not.toMatch(leaked);
    const view = await (await fetch(`${healerUrl}/healer/tickets/${ticket.id}/view`)).text();
    expect(view).toContain("customers_no_example");
    expect(view).not.toMatch(leaked);
    expect(view).toContain('id="approve"');
    const stored = listFiles(join(root, ".forge"));
    if (store === "sqlite") expect(stored).toContain("healer/healer.db");
    else {
      const dump = execFileSync(
        "pg_dump",
        ["-h", PG_HOST, "-p", String(PG_PORT), "-U", PG_USER, "--data-only", "--schema=healer", ticketDb],
        {
          encoding: "utf8",
        },
      );
      expect(dump).toContain("customers_no_example");
      expect(dump).not.toMatch(leaked);
    }
    for (const f of stored) expect(readFileSync(join(root, ".forge", f)).toString("latin1"), f).not.toMatch(leaked);

    const notifications = readFileSync(join(root, ".forge/healer/notifications.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; message: string; ticket_id: string });
    const proposed = notifications.find((n) => n.event === "proposed" && n.ticket_id === ticket.id);
    expect(proposed?.message).toContain(`${healerUrl}/healer/tickets/${ticket.id}/view`);
  });

  it("a column the contracts define but the database lost is database drift, failed with the hint to migrate", async () => {
    psql(db, "ALTER TABLE customers DROP COLUMN company;");
    expect((await fetch(`${app.url}/customers/?limit=5`)).status).toBe(500);
    const ticket = await eventually(async () => {
      const list = (await (await fetch(`${healerUrl}/healer/tickets?status=failed`)).json()) as Ticket[];
      return list.find((t) => t.error_type === "database_drift");
    });
    expect(ticket).toMatchObject({ source: "runtime", tier: 3, priority: "critical", fixable_by: "data", status: "failed" });
    expect(ticket.raw_error).toContain('column "company" does not exist');
    expect(ticket.resolution_note).toMatch(/database is behind the contracts \(column "company" does not exist\)/);
    expect(ticket.resolution_note).toContain("--target migrations");
    expect(ticket.resolution_note).not.toMatch(/generator bug/);
  });
});
