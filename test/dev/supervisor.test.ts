import { describe, expect, it } from "vitest";
import { createLog } from "../../src/dev/log.js";
import { StoppingError, Supervisor } from "../../src/dev/supervisor.js";
import { alive, descendants } from "./support.js";

function captured(color: boolean): { lines: string[]; log: ReturnType<typeof createLog> } {
  const lines: string[] = [];
  return { lines, log: createLog((text) => lines.push(text), color) };
}

describe("the charter dev log", () => {
  it("prefixes every line with its process, coloured only when asked", () => {
    const plain = captured(false);
    plain.log.child("backend", "hello");
    plain.log.info("ready");
    expect(plain.lines).toEqual(["backend  | hello\n", "dev      | ready\n"]);
    const coloured = captured(true);
    coloured.log.child("backend", "hello");
    coloured.log.error("broken");
    expect(coloured.lines[0]).toBe("\u001b[36mbackend  \u001b[0m| hello\n");
    expect(coloured.lines[1]).toContain("\u001b[31mbroken\u001b[0m");
  });
});

describe("the supervisor", () => {
  it("merges a child's output into the log and stops its whole process group, grandchildren included", async () => {
    const { lines, log } = captured(false);
    const supervisor = new Supervisor(log);
    // A shell that starts two sleepers and waits: stopping the shell alone would orphan them.
    const child = supervisor.start({
      name: "backend",
      command: "sh",
      args: ["-c", "echo started; sleep 300 & sleep 300 & wait"],
      cwd: ".",
      env: process.env,
    });
    const deadline = Date.now() + 10_000;
    while (descendants(child.pid).length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const tree = [child.pid, ...descendants(child.pid)];
    // The group leader and its lifeline, the shell, its two sleepers.
    expect(tree.length).toBe(5);
    await supervisor.stopAll();
    expect(tree.filter(alive)).toEqual([]);
    expect(lines).toContain("backend  | started\n");
    // Nothing starts once stopping began.
    expect(() => supervisor.start({ name: "late", command: "true", args: [], cwd: ".", env: process.env })).toThrow(StoppingError);
  });

  it("kills a child that ignores SIGTERM after the grace period", async () => {
    const supervisor = new Supervisor(captured(false).log);
    const child = supervisor.start({
      name: "stubborn",
      command: "sh",
      args: ["-c", "trap '' TERM; echo ready; sleep 300"],
      cwd: ".",
      env: process.env,
    });
    await new Promise<void>((resolve) => {
      const off = child.onLine((line) => {
        if (line === "ready") {
          off();
          resolve();
        }
      });
    });
    const tree = [child.pid, ...descendants(child.pid)];
    const t0 = Date.now();
    await supervisor.stop(child, 300);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(tree.filter(alive)).toEqual([]);
  });
});
