import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { generateMigrations } from "../../src/generators/migrations/index.js";
import { generateTarget } from "../../src/generators/registry.js";
import { TEST_REQUIREMENTS } from "../../src/generators/tests/index.js";
import { writeFiles } from "../../src/generators/writer.js";
import { startGeneratedBackend } from "../support/backend.js";
import { checkFiles, entityYaml, routeYaml, writeDomain } from "../support/domain.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { ensureVenv, VENV_PYTHON } from "../support/python.js";

const ref = (entity: string, required: boolean, onDelete?: string): string =>
  `      type: uuid\n${required ? "      required: true\n" : ""}      references:\n        entity: entity/shop/${entity}\n${onDelete ? `        on_delete: ${onDelete}\n` : ""}`;

/** An author, books that go with it (cascade), reviews that outlive their book (set_null), loans that hold it (restrict). */
function files(bookOnDelete = "cascade"): Record<string, string> {
  return {
    "entities/author.contract.yaml": entityYaml("author", "    name:\n      type: string\n      required: true\n"),
    "entities/book.contract.yaml": entityYaml(
      "book",
      `    title:\n      type: string\n      required: true\n    author_id:\n${ref("author", true, bookOnDelete)}`,
    ),
    "entities/review.contract.yaml": entityYaml("review", `    body:\n      type: string\n    book_id:\n${ref("book", false)}`),
    "entities/loan.contract.yaml": entityYaml("loan", `    note:\n      type: string\n    book_id:\n${ref("book", true, "restrict")}`),
    ...Object.fromEntries(["author", "book", "review", "loan"].map((e) => [`routes/${e}_api.contract.yaml`, routeYaml(e)])),
  };
}

describe("references.on_delete", () => {
  it("refuses set_null on a required reference, naming the place", () => {
    const r = checkFiles({
      "entities/author.contract.yaml": files()["entities/author.contract.yaml"] as string,
      "entities/book.contract.yaml": entityYaml("book", `    author_id:\n${ref("author", true, "set_null")}`),
    });
    const f = r.findings.find((x) => x.code === "field.on_delete_required");
    expect(f?.file).toContain("book.contract.yaml");
    expect(f?.path).toBe("/spec/fields/author_id/references/on_delete");
  });

  it("refuses an unknown rule in the schema", () => {
    const r = checkFiles({
      "entities/author.contract.yaml": entityYaml("author"),
      "entities/book.contract.yaml": entityYaml("book", `    author_id:\n${ref("author", false, "nullify")}`),
    });
    expect(r.ir).toBeNull();
  });

  it("becomes ON DELETE on the foreign keys, and a change of rule is a migration", () => {
    const { ir } = checkDomain(writeDomain(files()));
    if (!ir) throw new Error("does not compile");
    const schema = generateTarget(ir, "postgres", "/tmp/x").find((f) => f.path.endsWith("schema.sql"))?.content ?? "";
    expect(schema).toContain('REFERENCES "authors" ("id") ON DELETE CASCADE');
    expect(schema).toContain('REFERENCES "books" ("id") ON DELETE RESTRICT');
    expect(schema).toContain('REFERENCES "books" ("id") ON DELETE SET NULL');
    const first = generateMigrations({ ir, existing: new Map() });
    const { ir: next } = checkDomain(writeDomain(files("restrict")));
    if (!next) throw new Error("does not compile");
    const second = generateMigrations({ ir: next, existing: new Map(first.map((f) => [f.path, f.content])) });
    const migration = second.find((f) => f.path.includes("0002_"))?.content ?? "";
    expect(migration).toContain("DROP CONSTRAINT");
    expect(migration).toContain('REFERENCES "authors" ("id") ON DELETE RESTRICT');
  });

  describe("the generated suite checks it against the running app", () => {
    let root: string;
    let domain: string;
    beforeAll(() => {
      ensureVenv(TEST_REQUIREMENTS);
      root = mkdtempSync(join(tmpdir(), "charter-ondelete-"));
      domain = writeDomain(files());
      const { ir } = checkDomain(domain);
      if (!ir) throw new Error("does not compile");
      writeFiles(join(root, "runtime"), generateTarget(ir, "tests", join(root, "runtime")));
    }, 300_000);
    afterAll(() => {
      if (root) rmSync(root, { recursive: true, force: true });
    });

    for (const backend of ["memory", "postgres"] as const) {
      it(`on ${backend}: restrict answers 409, cascade deletes, set_null clears`, async () => {
        const testsDir = join(root, "runtime", "tests");
        const cases = JSON.parse(readFileSync(join(testsDir, "cases.json"), "utf8")) as { deletes: { id: string }[] };
        expect(cases.deletes.map((d) => d.id).sort()).toEqual([
          "book.author_id on_delete cascade",
          "loan.book_id on_delete restrict",
          "review.book_id on_delete set_null",
        ]);
        const app = await startGeneratedBackend({
          domainDir: domain,
          outDir: join(root, backend),
          backend,
          ...(backend === "postgres" ? { databaseUrl: databaseUrl(freshDatabase("import_on_delete")) } : {}),
        });
        try {
          const r = spawnSync(VENV_PYTHON, ["-m", "pytest", "-q", "-rfEs", "test_routes.py", "-k", "on_delete"], {
            cwd: testsDir,
            env: { ...process.env, BASE_URL: app.url, PYTHONDONTWRITEBYTECODE: "1" },
            encoding: "utf8",
            timeout: 300_000,
          });
          const output = `${r.stdout}${r.stderr}`;
          expect(r.status, output).toBe(0);
          expect(output).toContain("3 passed");
        } finally {
          await app.stop();
        }
      }, 600_000);
    }
  });
});
