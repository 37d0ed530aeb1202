import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../support/net.js";
import { alive, descendants, json, startDev } from "./support.js";

const root = mkdtempSync(join(tmpdir(), "charter-storm-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen({ host: "127.0.0.1", port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

describe("charter dev under an editor storm", () => {
  it("survives 200 edits by sed -i, atomic rename and delete + create, and a kill -9 leaves nothing behind", async () => {
    const dir = join(root, "storm");
    cpSync("examples/helpdesk", join(dir, "helpdesk"), { recursive: true });
    const api = await freePort();
    const healer = await freePort();
    const dev = startDev(["helpdesk", "--port", String(api), "--healer-port", String(healer), "--no-frontend"], dir);
    try {
      await dev.waitFor(/Watching helpdesk for changes/, 180_000);
      const file = join(dir, "helpdesk", "entities", "agent.contract.yaml");
      const original = readFileSync(file, "utf8");
      // The default of max_open_tickets (1-50) changes with every edit: it shows in the served OpenAPI.
      const value = (i: number): number => (i % 49) + 1;
      const text = (i: number): string => original.replace("      default: 10\n", `      default: ${value(i)}\n`);
      for (let i = 0; i < 200; i++) {
        if (i % 3 === 0) {
          // sed -i writes a temporary file beside the contract and renames it over.
          execFileSync("sed", ["-i", `s/^      default: [0-9][0-9]*$/      default: ${value(i)}/`, file]);
        } else if (i % 3 === 1) {
          const temp = join(dir, "helpdesk", "entities", `.agent.contract.yaml.${i}.swp`);
          writeFileSync(temp, text(i));
          renameSync(temp, file);
        } else {
          unlinkSync(file);
          writeFileSync(file, text(i));
        }
        // Bursts of ten, then a pause long enough for a reload to start in the middle of the next.
        if (i % 10 === 9) await new Promise((r) => setTimeout(r, 150));
      }
      writeFileSync(file, original.replace("      default: 10\n", "      default: 42\n"));
      // A reload may be running for an earlier edit: the last one must win within seconds.
      const served = async (): Promise<number | undefined> => {
        const spec = await json(`http://127.0.0.1:${api}/openapi.json`).catch(() => null);
        const body = spec?.body as {
          components?: { schemas?: { AgentCreate?: { properties?: { max_open_tickets?: { default?: number } } } } };
        };
        return body?.components?.schemas?.AgentCreate?.properties?.max_open_tickets?.default;
      };
      const deadline = Date.now() + 60_000;
      while ((await served()) !== 42 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(await served()).toBe(42);
      expect(dev.proc.exitCode).toBeNull();
      expect(dev.output()).not.toMatch(/internal error|ENOENT|Unhandled/);
      expect(await json(`http://127.0.0.1:${api}/health`)).toMatchObject({ status: 200 });
    } finally {
      const pids = descendants(dev.proc.pid as number);
      expect(pids.length).toBeGreaterThanOrEqual(2);
      dev.proc.kill("SIGKILL");
      await dev.exited;
      // Nothing may outlive charter dev: every child group ends through its lifeline.
      const deadline = Date.now() + 15_000;
      while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(pids.filter(alive)).toEqual([]);
      expect(await portFree(api)).toBe(true);
      expect(await portFree(healer)).toBe(true);
    }
  }, 300_000);
});
