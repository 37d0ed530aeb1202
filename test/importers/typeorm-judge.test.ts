import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { judge } from "../support/import-judges/typeorm.js";
import { extractJson } from "./support.js";

/**
 * The TypeORM judge (test/support/import-judges/typeorm.ts): TypeORM itself synchronizes the
 * entities into one PostgreSQL database, the generated schema.sql goes to another, and the
 * catalogs are compared; a difference no note of `charter extract` names is silent.
 */

describe("TypeORM judge (TypeORM's own synchronize on PostgreSQL)", () => {
  it.each([
    ["the corpus input nestjs-realworld-typeorm", "test/fixtures/import-corpus/nestjs-realworld-typeorm/input", 80],
    ["the Express + TypeORM fixture", "test/fixtures/importers/codebases/express_app", 40],
  ])(
    "finds no silent difference in %s",
    async (_name, rel, facts) => {
      const input = resolve(rel);
      const { domainDir, notes } = extractJson(input);
      const r = await judge({ inputPath: input, domainDir, notes });
      expect(r.silent).toEqual([]);
      expect(r.compared).toBeGreaterThan(facts);
    },
    120_000,
  );

  it("judges length, enum default, soft delete, uniques and each delete rule, and calls an unnamed change silent", async () => {
    const input = resolve("test/fixtures/importers/codebases/typeorm_app");
    const { domainDir, notes } = extractJson(input);
    const r = await judge({ inputPath: input, domainDir, notes });
    expect(r.silent).toEqual([]);
    expect(r.compared).toBeGreaterThan(50);
    // A one-to-one is a column on its owning side only; its uniqueness is named, not dropped.
    expect(readFileSync(join(domainDir, "entities/profile.contract.yaml"), "utf8")).toContain("member_id:");
    expect(readFileSync(join(domainDir, "entities/member.contract.yaml"), "utf8")).not.toContain("profile");
    expect(notes.find((n) => n.fact === "unique" && /profile\.member/i.test(n.subject))?.kind).toBe("skipped");
    const unnamed = await judge({ inputPath: input, domainDir, notes: [] });
    expect(unnamed.silent.map((s) => `${s.subject} ${s.fact}`)).toEqual(
      expect.arrayContaining(["members.email unique", "members.role nullability", "post.views nullability", "profile.memberId unique"]),
    );
    // A length and a delete rule the contracts got wrong are silent even with the import's notes.
    const member = join(domainDir, "entities/member.contract.yaml");
    writeFileSync(member, readFileSync(member, "utf8").replace("maxLength: 80", "maxLength: 81"));
    const post = join(domainDir, "entities/post.contract.yaml");
    writeFileSync(post, readFileSync(post, "utf8").replace("on_delete: cascade", "on_delete: restrict"));
    const edited = await judge({ inputPath: input, domainDir, notes });
    expect(edited.silent.map((s) => `${s.subject} ${s.fact}`).sort()).toEqual(["members.email length", "post.authorId on_delete"]);
  }, 120_000);
});
