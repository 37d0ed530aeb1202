import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { ImportNote } from "../../src/importers/model.js";
import { runCharter } from "../support/cli.js";
import { sweepExtract } from "../support/extract-sweep.js";
import { validates } from "./support.js";

const CODE = resolve("test/fixtures/importers/codebases");
const work = mkdtempSync(join(tmpdir(), "charter-never-crash-"));

describe("charter extract never crashes", () => {
  it("reads a backend folder with unreadable files: contracts for what reads, a located note for each file that does not", () => {
    // Once a file Python could not parse made the run end in `TypeError: Cannot read properties of
    // undefined (reading 'some')` (issue 38); a broken .prisma file ended it with an ImportError.
    const dir = join(work, "broken");
    const input = join(CODE, "broken_backend");
    const r = runCharter(["extract", input, "--domain", "teams", "--output", dir, "--yes", "--format", "json", "--no-llm"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/TypeError|at .*\.js:\d+/);
    const summary = JSON.parse(r.stdout) as { accepted: string[]; notes: ImportNote[] };
    expect(summary.accepted).toEqual(["draft", "team"]);
    validates(dir);
    const about = (file: string): ImportNote | undefined => summary.notes.find((n) => n.location?.file === join(input, file));
    expect(about("app/half_written.py")).toMatchObject({ kind: "skipped", location: { line: 3 } });
    expect(about("app/half_written.py")?.reason).toMatch(/^Python syntax error: /);
    // `except A, B:` (Python 3.14) is read around: the line is named, the file's other lines are read.
    expect(about("app/api/deps.py")).toMatchObject({ kind: "skipped", location: { line: 5 } });
    expect(about("web/half_written.ts")).toMatchObject({ kind: "skipped", location: { line: 7 } });
    expect(about("web/half_written.ts")?.reason).toMatch(/^TypeScript syntax error: /);
    expect(about("schema.prisma")).toMatchObject({ kind: "skipped", location: { line: 3 } });
    expect(about("schema.prisma")?.reason).toMatch(/invalid Prisma schema/);
  });
});

describe("extract over every .py and .ts file of the corpus (tests and migrations included)", () => {
  const committed = [
    "test/fixtures/import-corpus/django-styleguide/input",
    "test/fixtures/import-corpus/fastapi-template-sqlmodel/input",
    "test/fixtures/import-corpus/nestjs-realworld-typeorm/input",
    "test/fixtures/importers/codebases",
  ];
  // The public code bases of bench/import-corpus-external/, when fetched into .cache/import-corpus/.
  const fetched = existsSync(".cache/import-corpus")
    ? readdirSync(".cache/import-corpus")
        .map((n) => join(".cache/import-corpus", n, "input"))
        .filter((p) => existsSync(p))
    : [];

  it.each([...committed, ...fetched])("%s: contracts or located notes, never an uncaught exception", async (root) => {
    const r = await sweepExtract(resolve(root));
    expect(r.crashes).toEqual([]);
    if (committed.includes(root)) {
      expect(r.files).toBeGreaterThan(0);
      expect(r.tables).toBeGreaterThan(0);
    }
  });
});
