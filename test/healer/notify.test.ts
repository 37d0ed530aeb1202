import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Notification } from "../../src/healer/index.js";
import { Healer, Notifier, SIGNATURE_HEADER, TIMESTAMP_HEADER, WEBHOOK_TIMEOUT_MS } from "../../src/healer/index.js";
import { freePort } from "../support/net.js";
import { brokenExamples, makeProject, runCharterAsync } from "./helpers.js";

interface Received {
  headers: IncomingMessage["headers"];
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A webhook receiver on 127.0.0.1; `hang` accepts requests and never answers them. */
async function receiver(mode: "ok" | "hang" = "ok"): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      if (mode === "ok") res.writeHead(204).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return { url: `http://127.0.0.1:${port}/hook`, received };
}

const PAYLOAD_KEYS = ["timestamp", "event", "ticket_id", "contract_fqn", "status", "tier", "priority", "message"].sort();
const tier1 = brokenExamples().find((e) => e.type === "graph_edge")?.dir as string;

function jsonl(root: string): Notification[] {
  const lines = readFileSync(join(root, ".forge/healer/notifications.jsonl"), "utf8").split("\n");
  expect(lines.at(-1)).toBe("");
  return lines.slice(0, -1).map((l) => JSON.parse(l) as Notification);
}

describe("notifications", () => {
  it("healer fix notifies on the console, the JSONL file and the webhook, with the full notification payload", async () => {
    const hook = await receiver();
    const root = makeProject(tier1);
    const r = await runCharterAsync(["healer", "fix"], {
      cwd: root,
      env: { SVC_HEALER_WEBHOOK_URL: hook.url, SVC_HEALER_WEBHOOK_SECRET: "s3cret" },
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\[healer:queued\] /m);
    expect(r.stdout).toMatch(/^\[healer:applied\] .*regenerated \d+ file/m);

    const lines = jsonl(root);
    expect(lines.map((n) => n.event)).toEqual(["queued", "applied"]);
    for (const n of lines) {
      expect(Object.keys(n).sort()).toEqual(PAYLOAD_KEYS);
      expect(n.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/);
      expect(n).toMatchObject({ tier: 1, priority: "low" });
    }
    expect(lines[1]?.status).toBe("applied");

    expect(hook.received).toHaveLength(2);
    const bodies = hook.received.map((x) => JSON.parse(x.body) as Notification);
    expect(bodies.map((b) => b.event).sort()).toEqual(["applied", "queued"]);
    for (const x of hook.received) {
      expect(x.headers["content-type"]).toBe("application/json");
      const ts = x.headers[TIMESTAMP_HEADER.toLowerCase()] as string;
      expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
      const expected = `sha256=${createHmac("sha256", "s3cret").update(`${ts}.${x.body}`).digest("hex")}`;
      expect(x.headers[SIGNATURE_HEADER.toLowerCase()]).toBe(expected);
    }
    expect(bodies).toEqual(expect.arrayContaining(lines));
  });

  it("sends {text} to a chat-tool webhook when asked", async () => {
    const hook = await receiver();
    const n = new Notifier({ jsonlPath: join(makeProject(), "n.jsonl"), webhookUrl: hook.url, webhookFormat: "text", console: null });
    n.notify(sample());
    await n.flush();
    const body = JSON.parse(hook.received[0]?.body ?? "{}") as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["text"]);
    expect(body.text).toMatch(/applied: entity\/shop\/order/);
    expect(hook.received[0]?.headers[SIGNATURE_HEADER.toLowerCase()]).toBeUndefined();
  });

  it("picks {text} for a Slack-style address and raw JSON otherwise", () => {
    const fmt = (url: string): string =>
      (Notifier.fromEnv("/dev/null", { SVC_HEALER_WEBHOOK_URL: url }) as unknown as { format: string }).format;
    expect(fmt("https://hooks.slack.com/services/T000/B000/XXXX")).toBe("text");
    expect(fmt("https://example.com/healer")).toBe("json");
    const forced = Notifier.fromEnv("/dev/null", { SVC_HEALER_WEBHOOK_URL: "https://example.com/x", SVC_HEALER_WEBHOOK_FORMAT: "text" });
    expect((forced as unknown as { format: string }).format).toBe("text");
  });

  it("a hanging webhook does not slow the pipeline beyond its timeout budget", async () => {
    const hook = await receiver("hang");
    const root = makeProject(tier1);
    const logs: string[] = [];
    const healer = new Healer({
      projectRoot: root,
      env: { SVC_HEALER_WEBHOOK_URL: hook.url },
      notifier: Notifier.fromEnv(
        join(root, ".forge/healer/notifications.jsonl"),
        { SVC_HEALER_WEBHOOK_URL: hook.url },
        { console: null, log: (l) => logs.push(l) },
      ),
    });
    const started = Date.now();
    const summary = await healer.fix();
    const pipelineMs = Date.now() - started;
    await healer.close();
    const totalMs = Date.now() - started;
    expect(summary.applied).toBe(1);
    // The pipeline itself never waits for the receiver; closing waits at most one timeout.
    expect(pipelineMs).toBeLessThan(WEBHOOK_TIMEOUT_MS);
    expect(totalMs).toBeLessThan(2 * WEBHOOK_TIMEOUT_MS);
    expect(hook.received.length).toBe(2);
    expect(logs.filter((l) => /webhook delivery of \w+ for \w+ failed: timed out/.test(l))).toHaveLength(2);
    expect(jsonl(root).map((n) => n.event)).toEqual(["queued", "applied"]);
  }, 30_000);

  it("a refused webhook is logged and the pipeline goes on", async () => {
    const port = await freePort();
    const root = makeProject(tier1);
    const r = await runCharterAsync(["healer", "fix"], { cwd: root, env: { SVC_HEALER_WEBHOOK_URL: `http://127.0.0.1:${port}/hook` } });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Fixes applied: 1/);
    expect(r.stderr).toMatch(/webhook delivery of queued for \w+ failed/);
    expect(jsonl(root).map((n) => n.event)).toEqual(["queued", "applied"]);
  });

  it("the JSONL file holds one valid object per line under concurrent writers", async () => {
    const root = makeProject();
    const path = join(root, ".forge/healer/notifications.jsonl");
    const writers = Array.from({ length: 4 }, () => new Notifier({ jsonlPath: path, console: null }));
    for (let i = 0; i < 250; i++) for (const w of writers) w.notify({ ...sample(), message: `m${i} ${"x".repeat(i * 7)}` });
    const lines = jsonl(root);
    expect(lines).toHaveLength(1000);
    for (const n of lines) expect(Object.keys(n).sort()).toEqual(PAYLOAD_KEYS);
  });
});

function sample(): Notification {
  return {
    timestamp: "2026-11-22T10:00:00.000+00:00",
    event: "applied",
    ticket_id: "0f1e2d3c-0000-4000-8000-000000000000",
    contract_fqn: "entity/shop/order",
    status: "applied",
    tier: 1,
    priority: "low",
    message: "applied 1 change(s)",
  };
}
