import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import { writeDomain } from "../support/domain.js";
import { OBJECT_PROTOTYPE_NAMES, randomDomain } from "../support/random-domain.js";

/**
 * The arbitrary of the generation property test (test/generators/random-domains.test.ts) draws
 * valid domains only, every name class included: a finding here means the arbitrary or the
 * compiler is wrong, and fast-check shrinks the domain to a small counterexample. Drawn with names
 * past PostgreSQL's 63 bytes, a domain must be refused instead, with the error located at the name.
 */
describe("random domains", () => {
  it("always validate, with no error finding", () => {
    fc.assert(
      fc.property(randomDomain(), ({ files }) => {
        const dir = writeDomain(files);
        const { ir, findings } = checkDomain(dir);
        rmSync(dir, { recursive: true, force: true });
        const errors = findings.filter((f) => f.severity !== "warning").map((f) => `${f.file}: ${f.message}`);
        expect(errors).toEqual([]);
        expect(ir?.entities.length).toBeGreaterThan(0);
      }),
      { numRuns: 150, seed: 20_261_125 },
    );
  }, 120_000);

  it("draw names up to 63 bytes, Object.prototype's, Python's and PostgreSQL's among them", () => {
    const names = new Set(
      fc
        .sample(randomDomain(), { numRuns: 200, seed: 40_043 })
        .flatMap(({ plan }) => plan.entities.flatMap((e) => [e.name, ...e.fields.map((f) => f.name)])),
    );
    for (const n of ["constructor", "has_own_property", "to_string", "value_of", "proto", "prototype", "lambda", "select", "user"])
      expect(names, n).toContain(n);
    const bytes = [...names].map((n) => Buffer.byteLength(n));
    expect(Math.max(...bytes)).toBe(63);
    expect(OBJECT_PROTOTYPE_NAMES).toEqual(expect.arrayContaining(["constructor", "is_prototype_of", "to_locale_string"]));
  });

  it("refuse a name past 63 bytes with name.too_long at that name, and nothing else", () => {
    let refused = 0;
    fc.assert(
      fc.property(randomDomain({ tooLong: 0.5 }), ({ files, refusal }) => {
        const dir = writeDomain(files);
        const { ir, findings } = checkDomain(dir);
        const errors = findings.filter((f) => f.severity !== "warning");
        if (refusal === null) {
          rmSync(dir, { recursive: true, force: true });
          expect(errors).toEqual([]);
          return;
        }
        refused++;
        // The line the name stands on: the key of a field, the value of `table`.
        const text = readFileSync(join(dir, refusal.file), "utf8");
        const line = text.slice(0, text.indexOf(`"${refusal.name}"`)).split("\n").length;
        rmSync(dir, { recursive: true, force: true });
        expect(ir).toBeNull();
        expect(errors.map((f) => [f.code, f.file.endsWith(refusal.file), f.path, f.line, f.column > 0])).toEqual([
          ["name.too_long", true, `/${refusal.path.join("/")}`, line, true],
        ]);
        expect(errors[0]?.message).toContain(`is ${Buffer.byteLength(refusal.name)} bytes long`);
      }),
      { numRuns: 60, seed: 40_044 },
    );
    expect(refused).toBeGreaterThan(10);
  }, 120_000);

  it("refuse the names of Object.prototype that no contract name can spell, located", () => {
    const unspellable = Object.getOwnPropertyNames(Object.prototype).filter((n) => !/^[a-z][a-z0-9_]*$/.test(n));
    expect(unspellable).toEqual(expect.arrayContaining(["__proto__", "toString", "hasOwnProperty"]));
    for (const name of unspellable) {
      const files = randomDomainFiles(name);
      const dir = writeDomain(files);
      const { ir, findings } = checkDomain(dir);
      rmSync(dir, { recursive: true, force: true });
      expect(ir, name).toBeNull();
      const errors = findings.filter((f) => f.severity === "error");
      expect(errors.length, name).toBeGreaterThan(0);
      for (const f of errors) {
        expect(f.file, name).toMatch(/note\.contract\.yaml$/);
        expect(f.line, name).toBeGreaterThan(0);
      }
    }
  });
});

/** One entity with a field named `name` (and a plain one), as JSON. */
function randomDomainFiles(name: string): Record<string, string> {
  const spec = { fields: { title: { type: "string" }, [name]: { type: "string" } } };
  return {
    "entities/note.contract.yaml": `${JSON.stringify({ apiVersion: "charter/v1", kind: "Entity", metadata: { name: "note", domain: "shop" }, spec }, null, 2)}\n`,
  };
}
