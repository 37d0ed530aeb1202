import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { SqliteTicketStore } from "../../src/healer/index.js";
import { REPO_ROOT, TSX_LOADER } from "../support/cli.js";
import { BASE_DOMAIN, makeProject } from "./helpers.js";

// Enough fixes that four kills, each after up to 150 ms of random pause, never run out of them:
// with 24, a fast machine sometimes applied every fix before the fourth kill.
const ITEMS = 48;

function itemContract(i: number): string {
  const n = String(i).padStart(2, "0");
  return `# Item ${n} of the crash test; its graph edge is misspelled.
apiVersion: charter/v1
kind: Entity
metadata:
  name: item_${n}
  domain: shop
spec:
  fields:
    title:
      type: string
      required: true
    customer_id:
      type: uuid
      references:
        entity: entity/shop/customer
        display: name
        graph_edge: placedBy # fixed by the Healer
`;
}

function crashProject(): { root: string; items: Map<string, { before: string; after: string }> } {
  const root = makeProject();
  const domain = join(root, "domains", "shop");
  mkdirSync(join(domain, "entities"), { recursive: true });
  cpSync(join(BASE_DOMAIN, "entities", "customer.contract.yaml"), join(domain, "entities", "customer.contract.yaml"));
  const items = new Map<string, { before: string; after: string }>();
  for (let i = 0; i < ITEMS; i++) {
    const path = join(domain, "entities", `item_${String(i).padStart(2, "0")}.contract.yaml`);
    const before = itemContract(i);
    writeFileSync(path, before);
    items.set(path, { before, after: before.replace("graph_edge: placedBy", "graph_edge: PLACED_BY") });
  }
  return { root, items };
}

function appliedLines(root: string): number {
  const path = join(root, ".forge/healer/notifications.jsonl");
  if (!existsSync(path)) return 0;
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.includes('"event":"applied"')).length;
}

/** Starts `charter healer fix` and kills it with SIGKILL once `killAfter` more fixes were applied. */
async function runAndKill(root: string, killAfter: number): Promise<{ killed: boolean }> {
  const start = appliedLines(root);
  const child = spawn(process.execPath, ["--import", TSX_LOADER, join(REPO_ROOT, "src/cli/charter.ts"), "healer", "fix"], {
    cwd: root,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: "ignore",
  });
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  let killed = false;
  const deadline = Date.now() + 90_000;
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
    if (appliedLines(root) - start >= killAfter) {
      // A random pause lands the kill anywhere in the next fix: before, during or after its write.
      await new Promise((r) => setTimeout(r, Math.random() * 150));
      child.kill("SIGKILL");
      killed = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await exited;
  return { killed };
}

function assertWhole(items: Map<string, { before: string; after: string }>): number {
  let fixed = 0;
  for (const [path, { before, after }] of items) {
    const text = readFileSync(path, "utf8");
    expect([before, after]).toContain(text);
    if (text === after) fixed++;
  }
  return fixed;
}

describe("kill -9 in the middle of applying fixes", () => {
  it("leaves every contract wholly old or wholly new, and loses no ticket", async () => {
    const { root, items } = crashProject();
    const db = join(root, ".forge/healer/healer.db");

    for (const killAfter of [2, 3, 2, 1]) {
      const { killed } = await runAndKill(root, killAfter);
      expect(killed).toBe(true);
      assertWhole(items);
      const store = new SqliteTicketStore(db);
      // The scan files all tickets in one transaction: after a kill they are all there, once.
      expect(await store.list()).toHaveLength(ITEMS);
      expect(new Set((await store.list()).map((t) => t.raw_error + t.contract_fqn)).size).toBe(ITEMS);
      // Every ticket's status matches its contract file: applied ones are fixed on disk, and none
      // is closed as "obsolete" because a killed run had already written its fix.
      expect(await store.list({ status: "rejected" })).toEqual([]);
      for (const t of await store.list({ status: "applied" })) {
        const path = join(root, t.proposal?.file ?? "");
        expect(readFileSync(path, "utf8")).toBe(items.get(path)?.after);
      }
      await store.close();
    }

    const { killed } = await runAndKill(root, Number.POSITIVE_INFINITY);
    expect(killed).toBe(false);
    expect(assertWhole(items)).toBe(ITEMS);
    const store = new SqliteTicketStore(db);
    const tickets = await store.list();
    expect(tickets).toHaveLength(ITEMS);
    expect(tickets.map((t) => t.status)).toEqual(Array(ITEMS).fill("applied"));
    await store.close();
    expect(checkDomain(join(root, "domains")).errors).toBe(0);
    // One diff record per fix, even for a fix whose run was killed between its steps.
    expect(readdirSync(join(root, ".forge/diffs")).filter((f) => f.endsWith(".json"))).toHaveLength(ITEMS);
    // No half-written temporary file is left among the contracts.
    expect(readdirSync(join(root, "domains/shop/entities")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  }, 300_000);
});
