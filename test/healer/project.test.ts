import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectFromPath } from "../../src/healer/project.js";

const base = mkdtempSync(join(tmpdir(), "charter-project-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function contract(dir: string): void {
  mkdirSync(join(dir, "entities"), { recursive: true });
  writeFileSync(join(dir, "entities", "a.contract.yaml"), "kind: Entity\n");
}

describe("projectFromPath: one project model for dev, healer serve|fix, docker and k8s", () => {
  const project = join(base, "proj");
  contract(join(project, "domains", "shop"));
  const example = join(base, "examples", "helpdesk");
  contract(example);
  const fresh = join(base, "fresh");
  mkdirSync(fresh);

  it("derives the same root, domains directory and .forge/ from the root, domains/ and a domain in it", () => {
    const expected = { root: project, domainsDir: join(project, "domains"), forgeDir: join(project, ".forge") };
    expect(projectFromPath(project)).toMatchObject({ ...expected, scanDir: join(project, "domains"), kind: "root" });
    // The docker and k8s Healers run `healer serve domains` in /project.
    expect(projectFromPath(join(project, "domains"))).toMatchObject({ ...expected, scanDir: join(project, "domains"), kind: "domains" });
    expect(projectFromPath(join(project, "domains", "shop"))).toMatchObject({
      ...expected,
      scanDir: join(project, "domains", "shop"),
      kind: "domain-in-project",
    });
  });

  it("treats a lone domain folder as its own domains directory, with .forge/ beside it, not inside", () => {
    expect(projectFromPath(example)).toEqual({
      root: join(base, "examples"),
      domainsDir: example,
      scanDir: example,
      forgeDir: join(base, "examples", ".forge"),
      kind: "domain",
    });
  });

  it("takes a folder with no contracts and no domains/ as a new project root", () => {
    expect(projectFromPath(fresh)).toMatchObject({ root: fresh, domainsDir: join(fresh, "domains"), kind: "root" });
  });
});
