import { existsSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readPrismaSchema } from "../../src/importers/factory/prisma.js";
import { readSqlSchema } from "../../src/importers/factory/sql.js";
import { ImportError, type ImportModel, type ImportNote } from "../../src/importers/model.js";
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
    // A whole repository folder (routes, crud, alembic migrations, tests), not only its models.
    "test/fixtures/importers/whole-repos/fastapi-template-backend",
    "test/fixtures/importers/whole-repos/nestjs-realworld",
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

/** Every file and folder under root whose name ends with `ext` (a folder of migrations is read as one schema). */
function inputsUnder(root: string, ext: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) {
        if (readdirSync(full).some((f) => f.endsWith(ext) || existsSync(join(full, f, "migration.sql")))) out.push(full);
        walk(full);
      } else if (name.endsWith(ext)) out.push(full);
    }
  };
  walk(root);
  return out;
}

/** A result whose notes are located in the input, or an ImportError placed in it: anything else is a crash. */
async function endsWell(path: string, read: () => ImportModel | Promise<ImportModel>): Promise<string | null> {
  try {
    const model = await read();
    const stray = model.notes.find((n) => n.location !== undefined && !n.location.file.startsWith(path));
    return stray ? `a note located outside the input: ${JSON.stringify(stray)}` : null;
  } catch (e) {
    if (e instanceof ImportError && e.location?.file.startsWith(path)) return null;
    return e instanceof Error ? (e.stack ?? e.message).split("\n").slice(0, 3).join(" | ") : String(e);
  }
}

describe("the SQL and Prisma readers over every committed .sql and .prisma input (files and migration folders)", () => {
  const fixtures = resolve("test/fixtures");
  const sql = inputsUnder(fixtures, ".sql");
  const prisma = inputsUnder(fixtures, ".prisma");

  it("finds inputs of both kinds, migration folders among them", () => {
    expect(sql.length).toBeGreaterThan(10);
    expect(sql.some((p) => statSync(p).isDirectory())).toBe(true);
    expect(prisma.length).toBeGreaterThan(3);
  });

  // Each SQL input in both dialects: a MySQL dump read as PostgreSQL (and the reverse) is mangled input too.
  it.each(sql.flatMap((p) => [[p, "postgres"] as const, [p, "mysql"] as const]))(
    "%s as %s: a schema or a located error",
    async (path, dialect) => {
      expect(await endsWell(path, () => readSqlSchema(path, dialect))).toBeNull();
    },
  );

  it.each(prisma)("%s: a schema or a located error", async (path) => {
    expect(await endsWell(path, () => readPrismaSchema(path))).toBeNull();
  });
});
