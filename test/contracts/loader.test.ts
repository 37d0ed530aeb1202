import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findContractFiles, loadContracts, MAX_CONTRACT_BYTES, ParseCache, parseContractSource } from "../../src/contracts/index.js";
import { writeDomain } from "../support/domain.js";

const valid = "apiVersion: charter/v1\nkind: Mixin\nmetadata:\n  name: m\n  domain: d\nspec:\n  fields:\n    a:\n      type: string\n";

function loadOne(text: string | Buffer) {
  const dir = writeDomain({});
  writeFileSync(join(dir, "x.contract.yaml"), text);
  return loadContracts(dir);
}

describe("loader", () => {
  it("loads every *.contract.yaml under a directory recursively, in a stable order, and nothing else", () => {
    const dir = writeDomain({
      "b/two.contract.yaml": valid.replace("name: m", "name: two"),
      "a/one.contract.yaml": valid.replace("name: m", "name: one"),
      "notes.yaml": "a: 1\n",
      "README.md": "hi",
      ".hidden/three.contract.yaml": valid,
    });
    const r = loadContracts(dir);
    expect(r.findings).toEqual([]);
    expect(r.contracts.map((c) => c.file.split("/").slice(-2).join("/"))).toEqual(["a/one.contract.yaml", "b/two.contract.yaml"]);
  });

  it("loads a single file given as the path", () => {
    const dir = writeDomain({ "one.contract.yaml": valid });
    expect(findContractFiles(join(dir, "one.contract.yaml"))).toHaveLength(1);
    expect(loadContracts(join(dir, "one.contract.yaml")).contracts).toHaveLength(1);
  });

  it("locates invalid YAML at file:line:col", () => {
    const r = loadOne("apiVersion: charter/v1\nkind: Entity\nmetadata: [a, b\nspec: {}\n");
    expect(r.contracts).toEqual([]);
    // The parser notices the unclosed flow sequence where the next key starts.
    expect(r.findings[0]).toMatchObject({ code: "yaml.syntax", line: 4, column: 1, severity: "error" });
    expect(r.findings[0]?.message).toMatch(/flow sequence/i);
    expect(r.findings[0]?.file).toMatch(/x\.contract\.yaml$/);
  });

  it("refuses duplicate keys with their position", () => {
    const r = loadOne("apiVersion: charter/v1\nkind: Entity\nkind: Mixin\n");
    expect(r.findings).toEqual([expect.objectContaining({ code: "yaml.duplicate_key", line: 3, column: 1 })]);
  });

  it("refuses more than one document per file", () => {
    const r = loadOne(`${valid}---\n${valid}`);
    expect(r.findings).toEqual([expect.objectContaining({ code: "yaml.multiple_documents", line: 10 })]);
    expect(r.findings[0]?.message).toContain("2 YAML documents");
  });

  it("refuses a billion-laughs file quickly instead of expanding it", () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      lines.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(",")}]`);
    }
    const r = loadOne(`${lines.join("\n")}\n`);
    expect(r.contracts).toEqual([]);
    expect(r.findings[0]?.code).toBe("yaml.alias_limit");
  });

  it("refuses files over 1 MiB without parsing them", () => {
    const r = loadOne(`${valid}# ${"x".repeat(MAX_CONTRACT_BYTES)}\n`);
    expect(r.findings).toEqual([expect.objectContaining({ code: "file.too_large", line: 0 })]);
  });

  it("refuses bytes that are not UTF-8", () => {
    const r = loadOne(Buffer.concat([Buffer.from("apiVersion: charter/v1\nkind: "), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from("\n")]));
    expect(r.findings).toEqual([expect.objectContaining({ code: "file.encoding", message: "file is not valid UTF-8" })]);
  });

  it("refuses a file that is not a mapping, and an empty file", () => {
    expect(loadOne("- a\n- b\n").findings[0]).toMatchObject({
      code: "yaml.not_mapping",
      message: "contract must be a mapping, found a sequence",
    });
    expect(loadOne("just text\n").findings[0]).toMatchObject({ code: "yaml.not_mapping" });
    expect(loadOne("").findings[0]?.code).toMatch(/yaml\.(empty|not_mapping)/);
  });

  it("keeps loading the other files when one is broken", () => {
    const dir = writeDomain({ "a.contract.yaml": "a: [", "b.contract.yaml": valid });
    const r = loadContracts(dir);
    expect(r.contracts).toHaveLength(1);
    expect(r.findings).toHaveLength(1);
    expect(r.files).toHaveLength(2);
  });
});

describe("loader fast path", () => {
  it("gives the same data as the position-keeping parse for every example contract", async () => {
    const { parseDocument } = await import("yaml");
    const r = loadContracts("examples");
    expect(r.contracts.length).toBeGreaterThan(20);
    for (const c of r.contracts) expect(c.data, c.file).toEqual(parseDocument(c.source).toJS());
  });

  // YAML 1.2 core scalars where js-yaml's own schema and the `yaml` package disagree, and keys the
  // two would spell differently (null, collections): the fast path must agree or step aside.
  it.each([
    ["0b101", "-0x1", "+0o7", "0o17", "0x1F", "017", "1_000", "+12", "-0", "09"],
    ["1e3", "1.5e-3", ".5", "5.", "0.", ".inf", "-.Inf", "+.INF", ".NaN", ".NAN", "1.0", "-1.50", "1E3"],
    ["~", "null", "Null", "NULL", "''", "True", "TRUE", "false", "yes", "on", "y", "2001-12-14", "12:30:00", "1:20", "="],
  ])("reads the scalars %s the way the position-keeping parse does", async (...scalars) => {
    const { parseDocument } = await import("yaml");
    for (const s of scalars) {
      const source = `a: ${s}\nb: [${s}]\nc: {k: ${s}}\n${s === "''" ? "" : `${s}: key\n`}`;
      const r = parseContractSource(source, "/x.contract.yaml", "x.contract.yaml");
      expect("contract" in r ? r.contract.data : r.findings, s).toEqual(parseDocument(source).toJS());
    }
  });

  it("leaves keys the two parsers spell differently to the position-keeping parse", async () => {
    const { parseDocument } = await import("yaml");
    for (const source of ["? [a, b]\n: c\nd: 1\n", "[a]: b\n", "x:\n  {a: 1}: b\n", "~: v\nw: 1\n", "x:\n  - null: 1\n"]) {
      const r = parseContractSource(source, "/x.contract.yaml", "x.contract.yaml");
      const want = parseDocument(source, { uniqueKeys: true });
      if (want.errors.length > 0) expect("contract" in r, source).toBe(false);
      else expect("contract" in r ? r.contract.data : r.findings, source).toEqual(want.toJS());
    }
  });

  it("still locates positions lazily for contracts that took the fast path", () => {
    const dir = writeDomain({ "a.contract.yaml": valid });
    const c = loadContracts(dir).contracts[0];
    expect(c?.doc.getIn(["metadata", "name"])).toBe("m");
    expect(c?.lineCounter.linePos(0)).toEqual({ line: 1, col: 1 });
  });
});

describe("parse cache", () => {
  it("reuses an unchanged contract and parses again once its bytes change, even at the same size", () => {
    const dir = writeDomain({ "a.contract.yaml": valid, "b.contract.yaml": valid.replace("name: m", "name: b") });
    const cache = new ParseCache();
    const first = loadContracts(dir, { cache });
    const again = loadContracts(dir, { cache });
    expect(again.contracts[0]).toBe(first.contracts[0]);
    expect(again.contracts[1]).toBe(first.contracts[1]);
    // Same length, same second: only the bytes tell the edit apart.
    writeFileSync(join(dir, "a.contract.yaml"), valid.replace("name: m", "name: n"));
    const edited = loadContracts(dir, { cache });
    expect(edited.contracts[0]).not.toBe(first.contracts[0]);
    expect(edited.contracts[0]?.data.metadata).toMatchObject({ name: "n" });
    expect(edited.contracts[1]).toBe(first.contracts[1]);
  });

  it("keeps a broken file's located findings and forgets removed files", () => {
    const dir = writeDomain({ "a.contract.yaml": valid, "bad.contract.yaml": "a: [1\n" });
    const cache = new ParseCache();
    const uncached = loadContracts(dir);
    expect(loadContracts(dir, { cache }).findings).toEqual(uncached.findings);
    expect(loadContracts(dir, { cache }).findings).toEqual(uncached.findings);
    expect(uncached.findings[0]?.line).toBeGreaterThan(0);
    expect(cache.size).toBe(2);
    rmSync(join(dir, "bad.contract.yaml"));
    expect(loadContracts(dir, { cache }).findings).toEqual([]);
    expect(cache.size).toBe(1);
  });
});
