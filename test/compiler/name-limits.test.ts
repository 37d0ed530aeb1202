import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import type { DomainIR } from "../../src/compiler/index.js";
import { defaultTable, limitIdentifier, MAX_IDENTIFIER_BYTES, pluralize } from "../../src/compiler/naming.js";
import type { Finding } from "../../src/contracts/findings.js";
import { generateTarget } from "../../src/generators/index.js";
import { entityYaml, writeDomain } from "../support/domain.js";

/**
 * PostgreSQL keeps 63 bytes of a name and silently cuts the rest. Which names are refused and which
 * are shortened: tables and columns are the API's names, so one past the limit is a located
 * `name.too_long` error; derived names (indexes, constraints, sequences, triggers) are nobody's
 * but the database's, so they are shortened, deterministically and distinctly.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function check(files: Record<string, string>): { ir: DomainIR | null; errors: Finding[] } {
  const dir = writeDomain(files);
  dirs.push(dir);
  const { ir, findings } = checkDomain(dir);
  return { ir, errors: findings.filter((f) => f.severity === "error") };
}

/** A snake_case name of exactly `bytes` bytes, starting with `head`. */
function named(head: string, bytes: number): string {
  return `${head}_${"x".repeat(bytes - head.length - 1)}`;
}

const at = (errors: readonly Finding[]): [string, string, number, number][] => errors.map((f) => [f.code, f.path, f.line, f.column]);

describe("name.too_long: tables and columns", () => {
  it("accepts a table and a column of exactly 63 bytes", () => {
    const table = named("t", 63);
    const column = named("c", 63);
    const { ir, errors } = check({
      "entities/note.contract.yaml": entityYaml("note", `    ${column}:\n      type: string\n`, `  table: ${table}\n`),
    });
    expect(errors).toEqual([]);
    expect(ir?.entities[0]?.table).toBe(table);
    expect(ir?.entities[0]?.fields.map((f) => f.name)).toContain(column);
  });

  it("refuses a column of 64 bytes, at its definition", () => {
    const { ir, errors } = check({
      "entities/note.contract.yaml": entityYaml("note", `    title:\n      type: string\n    ${named("c", 64)}:\n      type: string\n`),
    });
    expect(ir).toBeNull();
    expect(at(errors)).toEqual([["name.too_long", `/spec/fields/${named("c", 64)}`, 11, 7]]);
    expect(errors[0]?.message).toContain("is 64 bytes long; PostgreSQL keeps only 63 bytes");
  });

  it("refuses a spec.table of 64 bytes, at its value", () => {
    const { errors } = check({ "entities/note.contract.yaml": entityYaml("note", undefined, `  table: ${named("t", 64)}\n`) });
    expect(at(errors)).toEqual([["name.too_long", "/spec/table", 7, 10]]);
  });

  it("refuses an entity whose table, its plural, passes 63 bytes though its name does not, at its name", () => {
    // `…x` takes `es`: 61 bytes make a 63-byte table, 62 a 64-byte one.
    const name = named("note", 61);
    expect(Buffer.byteLength(pluralize(name))).toBe(63);
    expect(check({ "entities/n.contract.yaml": entityYaml(name) }).errors).toEqual([]);
    const longer = named("note", 62);
    const { errors } = check({ "entities/n.contract.yaml": entityYaml(longer) });
    expect(at(errors)).toEqual([["name.too_long", "/metadata/name", 4, 9]]);
    expect(errors[0]?.message).toContain(`table name '${pluralize(longer)}' is 64 bytes long`);
  });

  it("refuses a mixin's field of 64 bytes in the mixin", () => {
    const mixin = `apiVersion: charter/v1\nkind: Mixin\nmetadata:\n  name: stamped\n  domain: shop\nspec:\n  fields:\n    ${named("m", 64)}:\n      type: string\n`;
    const { errors } = check({ "mixins/stamped.contract.yaml": mixin });
    expect(at(errors)).toEqual([["name.too_long", `/spec/fields/${named("m", 64)}`, 9, 7]]);
    expect(errors[0]?.file).toMatch(/mixins\/stamped\.contract\.yaml$/);
  });

  it("never reaches the byte count with a multi-byte name: the name pattern is ASCII", () => {
    const { errors } = check({ "entities/note.contract.yaml": entityYaml("note", `    ${"é".repeat(32)}:\n      type: string\n`) });
    expect(errors.map((f) => f.code)).not.toContain("name.too_long");
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((f) => f.line === 8)).toBe(true);
  });

  it("derives the tables of Object.prototype's names from the names, not from the prototype", () => {
    expect(pluralize("constructor")).toBe("constructors");
    expect(pluralize("value_of")).toBe("value_ofs");
    expect(defaultTable("constructor")).toBe("constructors");
    expect(pluralize("person")).toBe("people");
  });
});

describe("derived names: shortened, never refused", () => {
  it("keeps every index, constraint, sequence and trigger of 63-byte tables and columns within the limit, distinct", () => {
    const table = named("t", 63);
    // Two columns sharing their first 60 bytes: cut names would collide, hashed ones must not.
    const a = `${"c".repeat(61)}_a`;
    const b = `${"c".repeat(61)}_b`;
    const fields =
      `    ${a}:\n      type: string\n      enum: [one, two]\n      constraints: {minLength: 1, maxLength: 9, pattern: "^[a-z]+$"}\n` +
      `    ${b}:\n      type: integer\n      constraints: {min: 0, max: 9}\n` +
      `    ${named("r", 63)}:\n      type: uuid\n      references:\n        entity: entity/shop/target\n` +
      `    ${named("s", 63)}:\n      type: string\n      computed: sequence(N{n})\n`;
    const { ir, errors } = check({
      "entities/target.contract.yaml": entityYaml("target"),
      "entities/long.contract.yaml": entityYaml(
        named("long", 56),
        fields,
        `  table: ${table}\n  list_total: counter\n  number_prefix: LG\n  mixins: [mixin/stdlib/identifiable, mixin/stdlib/soft_deletable]\n`,
      ),
    });
    expect(errors).toEqual([]);
    if (!ir) throw new Error("no IR");
    const sql = generateTarget(ir, "postgres", join(tmpdir(), "charter-no-such-dir"))[0]?.content ?? "";
    const code = sql
      .split("\n")
      .filter((l) => !l.trimStart().startsWith("--"))
      .join("\n");
    const identifiers = new Set([...code.matchAll(/"([^"\n]+)"/g)].map((m) => m[1] as string));
    const over = [...identifiers].filter((n) => Buffer.byteLength(n) > MAX_IDENTIFIER_BYTES);
    expect(over).toEqual([]);
    const derived = (prefix: string): string[] => [...identifiers].filter((n) => n.startsWith(prefix));
    // Every kind of derived name is there, each shortened by the same rule.
    const checks = derived("ck_");
    expect(checks.length).toBeGreaterThanOrEqual(6);
    for (const what of ["enum", "min_length", "max_length", "pattern"])
      expect(checks).toContain(limitIdentifier(`ck_${table}_${a}_${what}`));
    for (const what of ["min", "max"]) expect(checks).toContain(limitIdentifier(`ck_${table}_${b}_${what}`));
    expect(derived("fk_")).toContain(limitIdentifier(`fk_${table}_${named("r", 63)}`));
    expect(derived("ix_")).toContain(limitIdentifier(`ix_${table}_${named("r", 63)}`));
    expect(derived("uq_")).toContain(limitIdentifier(`uq_${table}_${named("s", 63)}`));
    expect([...identifiers].filter((n) => n.endsWith("_number_seq") || /_[0-9a-f]{8}$/.test(n)).length).toBeGreaterThan(0);
    expect(ir.entities.find((e) => e.table === table)?.fields.find((f) => f.name === "number")?.computed).toMatchObject({
      sequenceName: limitIdentifier(`${named("long", 56)}_number_seq`),
    });
    // The triggers of list_total: counter and of soft deletion have fixed, short names.
    expect(sql).toMatch(/CREATE TRIGGER "row_counts_inserted"/);
    for (const m of sql.matchAll(/TRIGGER "([^"]+)"/g)) expect(Buffer.byteLength(m[1] as string)).toBeLessThanOrEqual(MAX_IDENTIFIER_BYTES);
    // The two columns' names share 60 bytes; their derived names stay apart.
    expect(limitIdentifier(`ck_${table}_${a}_enum`)).not.toBe(limitIdentifier(`ck_${table}_${b}_enum`));
  });

  it("shortens a long derived name to its head, `_` and 8 hex digits of its hash; leaves a short one alone", () => {
    const long = `ix_${"a".repeat(70)}`;
    const short = limitIdentifier(long);
    expect(short).toMatch(/^ix_a+_[0-9a-f]{8}$/);
    expect(Buffer.byteLength(short)).toBe(63);
    expect(limitIdentifier(long)).toBe(short);
    expect(limitIdentifier(named("ix", 63))).toBe(named("ix", 63));
    expect(limitIdentifier(named("ix", 64))).not.toBe(named("ix", 64));
    // Cut by characters, never inside one: what stays is whole UTF-8.
    const accented = limitIdentifier(`ck_${"é".repeat(40)}`);
    expect(Buffer.byteLength(accented)).toBeLessThanOrEqual(63);
    expect(Buffer.from(accented, "utf8").toString("utf8")).toBe(accented);
    expect(accented).not.toContain("\uFFFD");
  });
});
