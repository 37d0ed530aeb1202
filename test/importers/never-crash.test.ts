import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { ImportNote } from "../../src/importers/model.js";
import { runCharter } from "../support/cli.js";
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
