import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkFiles, readExisting, safeJoin, writeFiles } from "../../src/generators/index.js";

const tmp = () => mkdtempSync(join(tmpdir(), "charter-writer-"));

describe("writer", () => {
  it("writes new files, then only the ones whose bytes changed", () => {
    const out = tmp();
    const files = [
      { path: "a/b.txt", content: "one\n" },
      { path: "c.txt", content: "two\n" },
    ];
    expect(writeFiles(out, files)).toEqual({ written: ["a/b.txt", "c.txt"], unchanged: [] });
    const before = statSync(join(out, "c.txt")).mtimeMs;
    const second = writeFiles(out, [files[0] as { path: string; content: string }, { path: "c.txt", content: "TWO\n" }]);
    expect(second).toEqual({ written: ["c.txt"], unchanged: ["a/b.txt"] });
    expect(readFileSync(join(out, "c.txt"), "utf8")).toBe("TWO\n");
    expect(statSync(join(out, "c.txt")).mtimeMs).toBeGreaterThanOrEqual(before);
  });

  it("writes nothing in a dry run or a check, and reports what differs", () => {
    const out = tmp();
    writeFileSync(join(out, "same.txt"), "x");
    const files = [
      { path: "same.txt", content: "x" },
      { path: "new.txt", content: "y" },
    ];
    expect(checkFiles(out, files)).toEqual(["new.txt"]);
    expect(writeFiles(out, files, { dryRun: true }).written).toEqual(["new.txt"]);
    expect(existsSync(join(out, "new.txt"))).toBe(false);
  });

  it.each(["../escape.txt", "a/../../escape.txt", "/etc/passwd", "", "a\\..\\b", "nul\0byte"])("refuses the unsafe path %j", (p) => {
    const out = tmp();
    expect(() => writeFiles(out, [{ path: p, content: "x" }])).toThrow(/refusing/);
    expect(() => safeJoin(out, p)).toThrow(/refusing/);
    expect(existsSync(join(out, "..", "escape.txt"))).toBe(false);
  });

  it("reads back single files and whole folders for generators that need prior output", () => {
    const out = tmp();
    writeFiles(out, [
      { path: "db/migrations/0001_init.sql", content: "1" },
      { path: "db/migrations/0002_more.sql", content: "2" },
      { path: "db/snapshot.json", content: "{}" },
    ]);
    const got = readExisting(out, ["db/migrations/", "db/snapshot.json", "db/absent.json"]);
    expect([...got.entries()]).toEqual([
      ["db/migrations/0001_init.sql", "1"],
      ["db/migrations/0002_more.sql", "2"],
      ["db/snapshot.json", "{}"],
    ]);
  });
});
