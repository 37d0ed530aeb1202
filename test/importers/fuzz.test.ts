import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { interpretPython, readPythonFiles } from "../../src/importers/extract/python.js";
import { readTypeScriptFiles } from "../../src/importers/extract/typescript.js";
import { readOpenApi } from "../../src/importers/factory/openapi.js";
import { prismaModel } from "../../src/importers/factory/prisma.js";
import { readSqlSchema } from "../../src/importers/factory/sql.js";
import { ImportError, type ImportModel } from "../../src/importers/model.js";

/**
 * Never a crash (issue 38): each parser, fed truncated and mangled copies of real inputs (the
 * committed corpus fixtures), ends with a result or an ImportError naming the file, never another
 * exception. Seeds are fixed so a failure reproduces; fast-check shrinks it to a small mangling.
 */

const CORPUS = resolve("test/fixtures/import-corpus");
const work = mkdtempSync(join(tmpdir(), "charter-fuzz-"));
let n = 0;

/** The first 40,000 characters of each seed: big dumps are cut (a truncation of their own), parsers stay quick. */
const seed = (rel: string): string => readFileSync(join(CORPUS, rel), "utf8").slice(0, 40_000);

const SEEDS = {
  python: [
    "django-styleguide/input/blog_examples/models.py",
    "django-styleguide/input/users/models.py",
    "fastapi-template-sqlmodel/input/app/models.py",
  ],
  typescript: [
    "nestjs-realworld-typeorm/input/article/article.entity.ts",
    "nestjs-realworld-typeorm/input/article/comment.entity.ts",
    "nestjs-realworld-typeorm/input/user/user.entity.ts",
  ],
  prisma: ["documenso-prisma/input/schema.prisma", "financer-prisma-folder/input/account.prisma"],
  sql: ["pagila-postgres/input/pagila-schema.sql", "chinook-mysql/input/Chinook_MySql.sql", "northwind-postgres/input/northwind.sql"],
  openapi: ["swagger-petstore-openapi30/input/openapi.yaml", "museum-openapi31/input/openapi.yaml"],
} as const;

/** Pieces that break parsers: unbalanced brackets and quotes, a NUL, deep nesting, odd Unicode, huge numbers. */
const NOISE = [
  "(",
  ")",
  "{",
  "}",
  "[",
  "]",
  '"',
  "'",
  "`",
  ":",
  "\n",
  "\t",
  "\0",
  "@",
  "#",
  "\\",
  "\u2028",
  "é",
  "1e999",
  "-",
  "((((((((",
  "$ref",
  "*/",
  "/*",
];

type Mangle =
  | { op: "truncate"; at: number }
  | { op: "delete"; at: number; len: number }
  | { op: "insert"; at: number; text: string }
  | { op: "duplicate"; at: number; len: number }
  | { op: "swapLines"; a: number; b: number };

const mangle: fc.Arbitrary<Mangle> = fc.oneof(
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 200 }) }),
  fc.record({
    op: fc.constant("insert" as const),
    at: fc.nat(),
    text: fc.oneof(fc.constantFrom(...NOISE), fc.string({ maxLength: 8 })),
  }),
  fc.record({ op: fc.constant("duplicate" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 400 }) }),
  fc.record({ op: fc.constant("swapLines" as const), a: fc.nat(), b: fc.nat() }),
);

function apply(text: string, ms: readonly Mangle[]): string {
  let t = text;
  for (const m of ms) {
    const at = t.length === 0 ? 0 : ("at" in m ? m.at : 0) % (t.length + 1);
    if (m.op === "truncate") t = t.slice(0, at);
    else if (m.op === "delete") t = t.slice(0, at) + t.slice(at + m.len);
    else if (m.op === "insert") t = t.slice(0, at) + m.text + t.slice(at);
    else if (m.op === "duplicate") t = t.slice(0, at + m.len) + t.slice(at, at + m.len) + t.slice(at + m.len);
    else {
      const lines = t.split("\n");
      const a = m.a % lines.length;
      const b = m.b % lines.length;
      [lines[a], lines[b]] = [lines[b] as string, lines[a] as string];
      t = lines.join("\n");
    }
  }
  return t;
}

const input = (kind: keyof typeof SEEDS): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom(...SEEDS[kind]), fc.array(mangle, { minLength: 1, maxLength: 4 })).map(([rel, ms]) => apply(seed(rel), ms));

function write(text: string, ext: string): string {
  const dir = join(work, `case-${n++}`);
  mkdirSync(dir);
  const file = join(dir, `input${ext}`);
  writeFileSync(file, text);
  return file;
}

/** How each parser's runs ended: a fuzz whose every case is refused at the first byte tests little. */
const outcomes = { result: 0, located: 0 };

/** A result, or an ImportError that names the file: anything else is a crash. */
async function endsWell(file: string, read: () => ImportModel | Promise<ImportModel>): Promise<void> {
  try {
    const model = await read();
    outcomes.result++;
    expect(Array.isArray(model.tables)).toBe(true);
    for (const note of model.notes) if (note.location) expect(note.location.file).toBe(file);
  } catch (e) {
    if (!(e instanceof ImportError)) throw e;
    outcomes.located++;
    expect(e.message.startsWith(file) || e.location?.file === file, e.message).toBe(true);
  }
}

const RUNS = { numRuns: 60, seed: 38 };

describe("fuzz: every parser ends with a result or a located error", () => {
  beforeEach(() => {
    outcomes.result = 0;
    outcomes.located = 0;
  });
  afterEach((ctx) => {
    // Both ends are reached: mangled inputs that still read, and ones refused with their place.
    if (!ctx.task.name.startsWith("Python") && !ctx.task.name.startsWith("TypeScript")) {
      expect(outcomes.result, "runs that gave a result").toBeGreaterThan(0);
      expect(outcomes.located, "runs refused with a located error").toBeGreaterThan(0);
    }
  });

  it("Prisma", async () => {
    await fc.assert(
      fc.asyncProperty(input("prisma"), async (text) => {
        const file = write(text, ".prisma");
        await endsWell(file, () => prismaModel(text, file));
      }),
      RUNS,
    );
  });

  it("TypeScript extractor", async () => {
    await fc.assert(
      fc.asyncProperty(input("typescript"), async (text) => {
        const file = write(text, ".ts");
        await endsWell(file, () => {
          const r = readTypeScriptFiles([file]);
          return { format: "code", files: [file], tables: r.tables, operations: r.operations, notes: r.notes };
        });
      }),
      RUNS,
    );
  });

  it("SQL (PostgreSQL and MySQL)", async () => {
    await fc.assert(
      fc.asyncProperty(input("sql"), async (text) => {
        const file = write(text, ".sql");
        await endsWell(file, () => readSqlSchema(file));
      }),
      { ...RUNS, numRuns: 40 },
    );
  });

  it("OpenAPI", async () => {
    await fc.assert(
      fc.asyncProperty(input("openapi"), async (text) => {
        const file = write(text, ".yaml");
        await endsWell(file, () => readOpenApi(file));
      }),
      { ...RUNS, numRuns: 40 },
    );
  });

  it("Python extractor (one python3 run for the whole batch)", () => {
    const texts = fc.sample(input("python"), { numRuns: 120, seed: 38 });
    const files = texts.map((t) => write(t, ".py"));
    const parsed = readPythonFiles(files);
    expect(parsed.map((f) => f.path)).toEqual(files);
    // Both ends are reached: files that still parse, and files refused with their place.
    expect(parsed.filter((f) => f.error === undefined).length).toBeGreaterThan(0);
    expect(parsed.filter((f) => f.error !== undefined && f.error.line >= 1).length).toBeGreaterThan(0);
    // Each file on its own, so one that breaks a rule is found by name.
    for (const f of parsed) {
      const r = interpretPython([f]);
      for (const note of r.notes) if (note.location) expect(note.location.file).toBe(f.path);
    }
    // And together, as a code base.
    expect(Array.isArray(interpretPython(parsed).tables)).toBe(true);
  });
});
