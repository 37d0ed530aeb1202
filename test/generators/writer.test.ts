import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkFiles,
  GENERATED_NOTICE,
  hashHeader,
  MANIFEST_FILE,
  OWNED_NOTICE,
  ownedHeader,
  readExisting,
  safeJoin,
  writeFiles,
} from "../../src/generators/index.js";

const tmp = () => mkdtempSync(join(tmpdir(), "charter-writer-"));

describe("writer", () => {
  it("writes new files, then only the ones whose bytes changed", () => {
    const out = tmp();
    const files = [
      { path: "a/b.txt", content: "one\n" },
      { path: "c.txt", content: "two\n" },
    ];
    expect(writeFiles(out, files)).toEqual({ written: ["a/b.txt", "c.txt"], unchanged: [], removed: [], kept: [] });
    const before = statSync(join(out, "c.txt")).mtimeMs;
    const second = writeFiles(out, [files[0] as { path: string; content: string }, { path: "c.txt", content: "TWO\n" }]);
    expect(second).toEqual({ written: ["c.txt"], unchanged: ["a/b.txt"], removed: [], kept: [] });
    expect(readFileSync(join(out, "c.txt"), "utf8")).toBe("TWO\n");
    expect(statSync(join(out, "c.txt")).mtimeMs).toBeGreaterThanOrEqual(before);
  });

  it("judges a path listed twice in one call by what the first wrote, in a new folder too", () => {
    const out = join(tmp(), "new", "folder");
    const files = [
      { path: "n/a.txt", content: "1\n" },
      { path: "n/a.txt", content: "1\n" },
      { path: "m/deep/b.txt", content: "x\n" },
      { path: "m/deep/b.txt", content: "y\n" },
    ];
    expect(writeFiles(out, files)).toEqual({
      written: ["n/a.txt", "m/deep/b.txt", "m/deep/b.txt"],
      unchanged: ["n/a.txt"],
      removed: [],
      kept: [],
    });
    expect(readFileSync(join(out, "m/deep/b.txt"), "utf8")).toBe("y\n");
    // A file already in a folder that existed is found there, not taken for new.
    writeFileSync(join(out, "n/c.txt"), "mine\n");
    expect(writeFiles(out, [{ path: "n/c.txt", content: "mine\n" }]).unchanged).toEqual(["n/c.txt"]);
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

  describe("manifest", () => {
    const gen = (path: string, body: string, target = "fastapi-prod") => ({ path, content: `${hashHeader()}${body}\n`, target });

    it("records every generated file with its target and content hash", () => {
      const out = tmp();
      writeFiles(out, [gen("backend/app/a.py", "a = 1"), gen("frontend/x.ts", "x", "nextjs")]);
      const manifest = JSON.parse(readFileSync(join(out, MANIFEST_FILE), "utf8"));
      expect(Object.keys(manifest.files)).toEqual(["backend/app/a.py", "frontend/x.ts"]);
      expect(manifest.files["frontend/x.ts"].target).toBe("nextjs");
      expect(manifest.files["backend/app/a.py"].sha256).toMatch(/^[0-9a-f]{64}$/);
    });

    it("removes files of a target that are no longer generated, with their empty folders, and keeps other targets'", () => {
      const out = tmp();
      writeFiles(out, [gen("backend/app/models/old.py", "old"), gen("backend/app/main.py", "m"), gen("frontend/x.ts", "x", "nextjs")]);
      writeFileSync(join(out, "backend", "app", "custom.py"), "# my own module\n");
      const r = writeFiles(out, [gen("backend/app/main.py", "m")], { targets: ["fastapi-prod"] });
      expect(r.removed).toEqual(["backend/app/models/old.py"]);
      expect(existsSync(join(out, "backend/app/models"))).toBe(false);
      expect(existsSync(join(out, "backend/app/custom.py"))).toBe(true);
      expect(existsSync(join(out, "frontend/x.ts"))).toBe(true);
    });

    it("removes the files of a target that now generates nothing", () => {
      const out = tmp();
      writeFiles(out, [gen("frontend/x.ts", "x", "nextjs")]);
      expect(writeFiles(out, [], { targets: ["nextjs"] }).removed).toEqual(["frontend/x.ts"]);
    });

    it("reports a hand-edited generated file and leaves it alone, unless forced", () => {
      const out = tmp();
      writeFiles(out, [gen("backend/app/a.py", "a = 1")]);
      const edited = `${hashHeader()}a = 2  # my fix\n`;
      writeFileSync(join(out, "backend/app/a.py"), edited);
      const again = writeFiles(out, [gen("backend/app/a.py", "a = 3")]);
      expect(again.kept).toEqual([{ path: "backend/app/a.py", reason: "edited", stale: false }]);
      expect(again.written).toEqual([]);
      expect(readFileSync(join(out, "backend/app/a.py"), "utf8")).toBe(edited);
      // Still reported on the next run: the manifest keeps the hash charter wrote.
      expect(writeFiles(out, [gen("backend/app/a.py", "a = 3")]).kept).toHaveLength(1);
      expect(writeFiles(out, [gen("backend/app/a.py", "a = 3")], { force: true }).written).toEqual(["backend/app/a.py"]);
      expect(readFileSync(join(out, "backend/app/a.py"), "utf8")).toContain("a = 3");
    });

    it("never removes a stale file that was edited by hand or lost its header, and never overwrites a user's file", () => {
      const out = tmp();
      writeFiles(out, [gen("backend/app/edited.py", "e"), gen("backend/app/mine.py", "m")]);
      writeFileSync(join(out, "backend/app/edited.py"), `${hashHeader()}e = "changed"\n`);
      writeFileSync(join(out, "backend/app/mine.py"), "# taken over by hand\n");
      writeFileSync(join(out, "backend/app/user.py"), "# a user's file at a generated path\n");
      const r = writeFiles(out, [gen("backend/app/user.py", "u")], { targets: ["fastapi-prod"] });
      expect(r.removed).toEqual([]);
      expect(r.kept).toEqual([
        { path: "backend/app/user.py", reason: "not-generated", stale: false },
        { path: "backend/app/edited.py", reason: "edited", stale: true },
        { path: "backend/app/mine.py", reason: "not-generated", stale: true },
      ]);
      for (const f of ["edited.py", "mine.py", "user.py"]) expect(existsSync(join(out, "backend/app", f))).toBe(true);
      expect(readFileSync(join(out, "backend/app/user.py"), "utf8")).toBe("# a user's file at a generated path\n");
    });

    it("keeps permanent files (past migrations) although no later run produces them", () => {
      const out = tmp();
      writeFiles(out, [{ ...gen("backend/db/migrations/0001_initial.sql", "--", "migrations"), permanent: true }]);
      expect(writeFiles(out, [], { targets: ["migrations"] }).removed).toEqual([]);
      expect(existsSync(join(out, "backend/db/migrations/0001_initial.sql"))).toBe(true);
    });

    it("writes an owned file once, then keeps it byte for byte through edits, regeneration, force and pruning", () => {
      const out = tmp();
      const owned = (body: string) => ({
        path: "backend/app/custom/routes.py",
        content: `${ownedHeader(hashHeader)}${body}\n`,
        target: "fastapi-prod",
        owned: true,
      });
      const first = writeFiles(out, [owned("router = 1"), gen("backend/app/main.py", "main")]);
      expect(first.written).toEqual(["backend/app/custom/routes.py", "backend/app/main.py"]);
      const abs = join(out, "backend/app/custom/routes.py");
      expect(readFileSync(abs, "utf8")).toContain(OWNED_NOTICE);
      expect(readFileSync(abs, "utf8")).not.toContain(GENERATED_NOTICE);
      // Owned files are the user's: the manifest does not list them, so nothing can take them for stale.
      expect(Object.keys(JSON.parse(readFileSync(join(out, MANIFEST_FILE), "utf8")).files)).toEqual(["backend/app/main.py"]);

      const edited = `# my own router\nrouter = "mine"\n`;
      writeFileSync(abs, edited);
      const files = [owned("router = 2"), gen("backend/app/main.py", "main v2")];
      expect(checkFiles(out, files)).toEqual(["backend/app/main.py"]);
      expect(writeFiles(out, files, { force: true })).toEqual({
        written: ["backend/app/main.py"],
        unchanged: ["backend/app/custom/routes.py"],
        removed: [],
        kept: [],
      });
      expect(readFileSync(abs, "utf8")).toBe(edited);
      // A run that no longer produces it (the entity was removed) leaves it too, even forced.
      expect(writeFiles(out, [gen("backend/app/main.py", "main v2")], { force: true }).removed).toEqual([]);
      expect(writeFiles(out, [], { targets: ["fastapi-prod"], force: true }).removed).toEqual(["backend/app/main.py"]);
      expect(readFileSync(abs, "utf8")).toBe(edited);
      expect(checkFiles(out, [owned("router = 3")])).toEqual([]);
    });

    it("writes an owned file again when the user deleted it", () => {
      const out = tmp();
      const owned = { path: "frontend/src/custom/nav.ts", content: "export const x = 1;\n", target: "nextjs", owned: true };
      writeFiles(out, [owned]);
      rmSync(join(out, owned.path));
      expect(checkFiles(out, [owned])).toEqual([owned.path]);
      expect(writeFiles(out, [owned]).written).toEqual([owned.path]);
    });

    it("changes nothing in a dry run and lists stale and edited files in a check", () => {
      const out = tmp();
      writeFiles(out, [gen("backend/app/a.py", "a"), gen("backend/app/b.py", "b")]);
      writeFileSync(join(out, "backend/app/a.py"), `${hashHeader()}a = "edited"\n`);
      const before = readFileSync(join(out, MANIFEST_FILE), "utf8");
      expect(checkFiles(out, [gen("backend/app/a.py", "a2")], { targets: ["fastapi-prod"] })).toEqual([
        "backend/app/a.py",
        "backend/app/b.py",
      ]);
      expect(existsSync(join(out, "backend/app/b.py"))).toBe(true);
      expect(readFileSync(join(out, MANIFEST_FILE), "utf8")).toBe(before);
    });
  });

  // The writer trusts what it hashed for a file whose inode, size, mtime and ctime are unchanged
  // (a long-running Healer regenerates after every fix without reading hundreds of files back).
  // Every kind of edit below changes at least one of them, so each is still seen as an edit.
  describe("trusting the files it wrote while they are unchanged", () => {
    const gen = (path: string, body: string) => ({ path, content: `${hashHeader()}${body}\n`, target: "fastapi-prod" });

    it("sees a same-size hand edit, even with the mtime set back, and leaves it alone", () => {
      const out = tmp();
      const file = join(out, "app/a.py");
      expect(writeFiles(out, [gen("app/a.py", 'a = "1"')]).written).toEqual(["app/a.py"]);
      expect(writeFiles(out, [gen("app/a.py", 'a = "1"')]).unchanged).toEqual(["app/a.py"]);
      const { atimeMs, mtimeMs, size } = statSync(file);
      const edited = `${hashHeader()}a = "X"\n`;
      writeFileSync(file, edited);
      utimesSync(file, atimeMs / 1000, mtimeMs / 1000);
      expect(statSync(file).size).toBe(size);
      expect(statSync(file).mtimeMs).toBeCloseTo(mtimeMs, 2);
      const r = writeFiles(out, [gen("app/a.py", 'a = "2"')]);
      expect(r.kept).toEqual([{ path: "app/a.py", reason: "edited", stale: false }]);
      expect(readFileSync(file, "utf8")).toBe(edited);
      expect(checkFiles(out, [gen("app/a.py", 'a = "1"')])).toEqual(["app/a.py"]);
    });

    it("sees a file replaced through a rename, and one deleted, and rewrites them when asked", () => {
      const out = tmp();
      writeFiles(out, [gen("a.py", "a = 1"), gen("b.py", "b = 1")]);
      writeFileSync(join(out, "a.new"), "mine\n");
      renameSync(join(out, "a.new"), join(out, "a.py"));
      writeFileSync(join(out, "b.py"), "");
      const r = writeFiles(out, [gen("a.py", "a = 1"), gen("b.py", "b = 1")]);
      expect(r.kept).toEqual([
        { path: "a.py", reason: "not-generated", stale: false },
        { path: "b.py", reason: "not-generated", stale: false },
      ]);
      const forced = writeFiles(out, [gen("a.py", "a = 1"), gen("b.py", "b = 1")], { force: true });
      expect(forced.written).toEqual(["a.py", "b.py"]);
      expect(readFileSync(join(out, "a.py"), "utf8")).toBe(gen("a.py", "a = 1").content);
      expect(writeFiles(out, [gen("a.py", "a = 1"), gen("b.py", "b = 1")]).unchanged).toEqual(["a.py", "b.py"]);
    });

    it("rewrites an unchanged file of its own whose generated content changed", () => {
      const out = tmp();
      writeFiles(out, [gen("a.py", "a = 1")]);
      writeFiles(out, [gen("a.py", "a = 1")]);
      expect(writeFiles(out, [gen("a.py", "a = 2")]).written).toEqual(["a.py"]);
      expect(readFileSync(join(out, "a.py"), "utf8")).toBe(gen("a.py", "a = 2").content);
    });
  });
});
