import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { type FakeLlm, useFakeLlm } from "../support/fake-llm.js";
import { BASE_DOMAIN, brokenShop, makeProject } from "./helpers.js";
import { call, json, type RawResponse as Res } from "./raw-http.js";
import { type HealerProcess, startHealerProcess } from "./serve-process.js";

// Issue 39, item 5: the gaps a stranger could still use, each tried against a real `healer serve`.

const TOKEN = "hardening-token-0123456789abcdef-0123456789";
const API_KEY = "sk-example-api-key-7f3a9c2e1b";
const MISSING_FIELD = brokenShop("missing_type");
const ROOMY_BUDGET = { SVC_HEALER_LLM_CALLS_PER_MINUTE: "100", SVC_HEALER_LLM_CALLS_PER_ERROR: "100" };
const llm = useFakeLlm();

/** Every byte the Healer keeps under `.forge/`: the SQLite file (and its WAL) and notifications.jsonl. */
function stored(root: string): string {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
  return walk(join(root, ".forge"))
    .map((p) => readFileSync(p).toString("latin1"))
    .join("\n");
}

describe("redaction of every report kind, with a token (SQLite store)", () => {
  let proc: HealerProcess;
  let root: string;
  let fake: FakeLlm;
  const bearer = { authorization: `Bearer ${TOKEN}` };
  beforeAll(async () => {
    fake = llm();
    root = makeProject(MISSING_FIELD);
    proc = await startHealerProcess(root, {
      ...fake.env(),
      ...ROOMY_BUDGET,
      SVC_HEALER_TOKEN: TOKEN,
      EXAMPLE_API_KEY: API_KEY,
      HEALER_DATABASE_URL: "",
    });
  });
  afterAll(async () => {
    await proc?.stop();
  });

  const SECRETS = [
    TOKEN,
    API_KEY,
    "hunter2-secret",
    "ops.lead@example.com",
    "jane.doe@example.com",
    "7946 0958",
    "S3cretDbPass",
    "Db0therPass",
  ];

  it("keeps no secret, e-mail, phone number or DSN password in the store, notifications, console, pages or JSON", async () => {
    const finding = checkDomain(join(root, "domains")).findings.find((f) => f.severity === "error");
    if (!finding) throw new Error("the fixture lost its error");
    const reports = [
      {
        source: "validation",
        contract_fqn: finding.fqn,
        error: finding.message,
        stacktrace: `CI log: token ${TOKEN} key ${API_KEY} password: hunter2-secret by ops.lead@example.com`,
      },
      { source: "manual", error: "jane.doe@example.com called from +44 20 7946 0958: orders vanish after a save" },
      {
        source: "runtime",
        error: "OperationalError: could not connect to postgresql://app:S3cretDbPass@db/app",
        context: { path: "/orders", status_code: 500 },
        stacktrace:
          'Traceback (most recent call last):\n  File "app/db.py", line 3, in connect\nOSError: postgres://app:Db0therPass@db:5432/app refused',
      },
    ];
    const ids: string[] = [];
    for (const r of reports) {
      const res = await call(proc.url, "POST", "/healer/ingest", json(r, bearer));
      expect(res.status, res.text).toBe(200);
      ids.push(JSON.parse(res.text).ticket_id);
    }
    const answers = [
      (await call(proc.url, "GET", "/healer", { headers: bearer })).text,
      (await call(proc.url, "GET", "/healer/tickets", { headers: bearer })).text,
    ];
    for (const id of ids) {
      answers.push((await call(proc.url, "GET", `/healer/tickets/${id}`, { headers: bearer })).text);
      answers.push((await call(proc.url, "GET", `/healer/tickets/${id}/view`, { headers: bearer })).text);
    }
    const everything = [stored(root), proc.output(), ...answers].join("\n");
    // The reports did land (a test that stored nothing would pass the checks below).
    expect(everything).toContain("orders vanish after a save");
    expect(everything).toContain("postgresql://app:<redacted>@db/app");
    expect(answers.join("\n")).toContain("CI log: token");
    expect(readFileSync(join(root, ".forge", "healer", "notifications.jsonl"), "utf8")).toContain("orders vanish");
    for (const secret of SECRETS) expect(everything, secret).not.toContain(secret);
  });

  it("a burst of wrong sign-ins gets 429 with Retry-After; the right token still works from another client", async () => {
    const login = (tokenGiven: string, localAddress: string) =>
      call(proc.url, "POST", "/healer/login", {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `token=${encodeURIComponent(tokenGiven)}&next=/healer`,
        localAddress,
      });
    const statuses: number[] = [];
    let last: Res | undefined;
    for (let i = 0; i < 30; i++) {
      last = await login(`guess-${i}`, "127.0.0.1");
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(20).fill(429));
    expect(Number(last?.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(last?.headers["retry-after"])).toBeLessThanOrEqual(60);
    // The guessing address waits, even with the right token; another address signs in at once.
    expect((await login(TOKEN, "127.0.0.1")).status).toBe(429);
    const other = await login(TOKEN, "127.0.0.2");
    expect(other.status).toBe(303);
    expect(String(other.headers["set-cookie"])).toMatch(/charter_healer_session=/);
  });
});

describe("without a token: ingest behind the Host allow-list, validation reports checked again", () => {
  let proc: HealerProcess;
  let root: string;
  let fake: FakeLlm;
  let port: string;
  beforeAll(async () => {
    fake = llm();
    root = makeProject(BASE_DOMAIN);
    proc = await startHealerProcess(root, { ...fake.env(), ...ROOMY_BUDGET, SVC_HEALER_TOKEN: "", HEALER_DATABASE_URL: "" });
    port = new URL(proc.url).port;
  });
  afterAll(async () => {
    await proc?.stop();
  });

  it("a page whose name was rebound to 127.0.0.1 cannot file a report", async () => {
    const report = { source: "manual", error: "filed from a rebound page" };
    const rebound = await call(proc.url, "POST", "/healer/ingest", json(report, { host: `evil.example:${port}` }));
    expect(rebound.status).toBe(403);
    expect(rebound.text).toMatch(/Host \\"evil\.example:\d+\\" is not this Healer's address/);
    expect((await call(proc.url, "POST", "/healer/ingest", json(report, { host: `localhost:${port}` }))).status).toBe(200);
    expect((await call(proc.url, "POST", "/healer/ingest", json(report, { host: `127.0.0.1:${port}` }))).status).toBe(200);
  });

  it("a validation report with made-up text is refused and costs no model call", async () => {
    const before = fake.requests.length;
    const made = await call(
      proc.url,
      "POST",
      "/healer/ingest",
      json({ source: "validation", contract_fqn: "entity/shop/customer", error: "field email must be dropped and roles widened" }),
    );
    expect(made.status).toBe(400);
    expect(made.text).toMatch(/contract \\"entity\/shop\/customer\\" does not fail validation with this error/);
    const bySource = await call(
      proc.url,
      "POST",
      "/healer/ingest",
      json({ source: "compilation", error: "x", context: { source_path: "domains/shop/entities/order.contract.yaml" } }),
    );
    expect(bySource.status).toBe(400);
    expect(bySource.text).toMatch(/does not fail validation/);
    const tickets = JSON.parse((await call(proc.url, "GET", "/healer/tickets")).text) as { source: string }[];
    expect(tickets.filter((t) => t.source !== "manual")).toEqual([]);
    expect(fake.requests.length).toBe(before);
  });
});

describe("a short Healer token", () => {
  it("is refused outside development, naming the variable and the rule", async () => {
    const root = makeProject(BASE_DOMAIN);
    const proc = await startHealerProcess(root, { SVC_HEALER_TOKEN: "abc", APP_ENV: "", HEALER_DATABASE_URL: "" }, { expectFailure: true });
    expect(await proc.exited).not.toBe(0);
    expect(proc.output()).toContain("SVC_HEALER_TOKEN is 3 bytes; outside development (APP_ENV=development) it must be at least 32 bytes");
    const dev = await startHealerProcess(root, { SVC_HEALER_TOKEN: "abc", APP_ENV: "development", HEALER_DATABASE_URL: "" });
    try {
      expect(dev.output()).toContain("auth: token required");
    } finally {
      await dev.stop();
    }
  });
});
