import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CORPUS_DIR, corpusInputs, runCorpusInput } from "../support/import-corpus.js";

/**
 * The faster half of the corpus of real public inputs, all the way to a working app: import ->
 * validate -> generate -> the app on PostgreSQL -> its generated suite, which must pass. The whole
 * corpus, with its two slowest inputs (documenso, 51 entities, about 50 s each), is
 * `npm run bench -- import-corpus`.
 */
const FASTER_HALF = [
  "chinook-mysql",
  "chinook-postgres",
  "django-styleguide",
  "fastapi-template-sqlmodel",
  // An entity `setting` (the app did not start), an array of dates and one of objects (the suite's
  // samples were refused): faults of the generated app the corpus found.
  "financer-migrations",
  "financer-prisma-folder",
  "museum-openapi31",
  "nestjs-realworld-typeorm",
  "northwind-postgres",
  "pagila-postgres",
  "sakila-mysql",
  "sakila-postgres",
  "swagger-petstore-openapi30",
];

describe("the import corpus", () => {
  const inputs = corpusInputs();

  it("holds at least 15 real inputs, each with its licence and where it came from", () => {
    expect(inputs.length).toBeGreaterThanOrEqual(15);
    expect(new Set(inputs.map((i) => i.format))).toEqual(new Set(["sql", "prisma", "openapi", "extract"]));
    for (const i of inputs) {
      expect(i.repository, i.name).toMatch(/^https:\/\/github\.com\/[^/]+\/[^/]+$/);
      expect(i.commit, i.name).toMatch(/^[0-9a-f]{40}$/);
      expect(statSync(join(CORPUS_DIR, i.name, "LICENSE")).size, i.name).toBeGreaterThan(0);
      const source = JSON.parse(readFileSync(join(CORPUS_DIR, i.name, "SOURCE.json"), "utf8")) as { paths: string[] };
      expect(source.paths.length, i.name).toBeGreaterThan(0);
      expect(existsSync(join(CORPUS_DIR, i.name, i.command.split(":")[1] as string)), i.name).toBe(true);
    }
  });

  for (const name of FASTER_HALF) {
    it(`${name}: the generated suite passes against the imported app on PostgreSQL`, async () => {
      const input = inputs.find((i) => i.name === name);
      if (!input) throw new Error(`${name} is not in the corpus`);
      const r = await runCorpusInput(input);
      expect(r.failedAt, `${r.failedAt}: ${r.detail}`).toBeNull();
      expect(r.ok).toBe(true);
      expect(r.entities).toBeGreaterThan(0);
      expect(r.suite?.failed).toBe(0);
      expect(r.suite?.passed).toBeGreaterThan(r.entities);
    }, 600_000);
  }
});
