import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runCharter, runCli } from "../support/cli.js";

function listTree(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        out.push(`${relative(root, p)}/`);
        walk(p);
      } else out.push(relative(root, p));
    }
  };
  walk(root);
  return out;
}

describe("charter-init", () => {
  it("creates exactly the project scaffold, whose starter contract validates", () => {
    const parent = mkdtempSync(join(tmpdir(), "charter-init-"));
    const r = runCli("charter-init", ["acme", "--path", parent]);
    expect(r.status, r.stderr).toBe(0);
    const root = join(parent, "acme");
    const tree = listTree(root).filter((p) => !p.startsWith(".forge/schemas/") || p === ".forge/schemas/");
    expect(tree).toEqual([
      ".env",
      ".env.example",
      ".forge/",
      ".forge/diffs/",
      ".forge/diffs/.gitkeep",
      ".forge/healer/",
      ".forge/schemas/",
      ".gitignore",
      "AGENTS.md",
      "README.md",
      "domains/",
      "domains/acme/",
      "domains/acme/agents/",
      "domains/acme/agents/.gitkeep",
      "domains/acme/entities/",
      "domains/acme/entities/item.contract.yaml",
      "domains/acme/pages/",
      "domains/acme/pages/.gitkeep",
      "domains/acme/routes/",
      "domains/acme/routes/.gitkeep",
      "domains/acme/workflows/",
      "domains/acme/workflows/.gitkeep",
      "runtime/",
      "runtime/.gitkeep",
    ]);
    expect(readFileSync(join(root, ".gitignore"), "utf8")).toMatch(/^runtime\/$/m);
    expect(readFileSync(join(root, "AGENTS.md"), "utf8")).toContain("never edit a generated file by hand");
    expect(readFileSync(join(root, ".env.example"), "utf8")).toMatch(/^AUTH_SECRET=$/m);
    expect(readFileSync(join(root, ".env"), "utf8")).toMatch(/AUTH_SECRET=[0-9a-f]{64}/);

    const starter = join(root, "domains/acme/entities/item.contract.yaml");
    const schemaLine = readFileSync(starter, "utf8").split("\n")[0] ?? "";
    expect(schemaLine).toMatch(/^# yaml-language-server: \$schema=(.+)$/);
    const schemaPath = resolve(dirname(starter), schemaLine.split("=")[1] ?? "");
    expect(JSON.parse(readFileSync(schemaPath, "utf8")).title).toBe("Charter contract (charter/v1)");

    const v = runCharter(["forge", "validate", join(root, "domains/acme")]);
    expect(v.status, v.stdout).toBe(0);
    expect(v.stdout).toContain("entity/acme/item");
  });

  it("refuses an existing non-empty target and leaves it untouched", () => {
    const parent = mkdtempSync(join(tmpdir(), "charter-init-"));
    mkdirSync(join(parent, "acme"));
    writeFileSync(join(parent, "acme", "keep.txt"), "mine");
    const r = runCli("charter-init", ["acme", "-p", parent]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("exists and is not empty");
    expect(readdirSync(join(parent, "acme"))).toEqual(["keep.txt"]);
  });

  it("scaffolds into an existing empty directory", () => {
    const parent = mkdtempSync(join(tmpdir(), "charter-init-"));
    mkdirSync(join(parent, "acme"));
    expect(runCli("charter-init", ["acme", "-p", parent]).status).toBe(0);
  });

  it.each(["Acme", "my-shop", "1shop", "../evil", "a/b", ""])("refuses the invalid name %j", (name) => {
    const parent = mkdtempSync(join(tmpdir(), "charter-init-"));
    const r = runCli("charter-init", [name, "-p", parent]);
    expect(r.status).toBe(2);
    expect(readdirSync(parent)).toEqual([]);
    expect(existsSync(join(parent, "..", "evil"))).toBe(false);
  });
});
