import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadContracts } from "../../src/contracts/index.js";
import { ReadAhead } from "../../src/contracts/read-ahead.js";
import { writeDomain } from "../support/domain.js";

const entity = (i: number): string =>
  `apiVersion: charter/v1\nkind: Entity\nmetadata:\n  name: e${i}\n  domain: d\nspec:\n  fields:\n    title: {type: string}\n`;

describe("read-ahead", () => {
  it("gives each file's bytes in order, the size of one too large, and a failure for one it cannot read", () => {
    const dir = writeDomain({});
    const paths = [0, 1, 2].map((i) => join(dir, `f${i}.txt`));
    writeFileSync(paths[0] as string, "first");
    writeFileSync(paths[1] as string, "x".repeat(200));
    writeFileSync(paths[2] as string, "");
    const ahead = new ReadAhead([paths[0] as string, join(dir, "missing.txt"), paths[1] as string, paths[2] as string], 100);
    const first = ahead.take(0);
    expect("bytes" in first && Buffer.from(first.bytes).toString()).toBe("first");
    expect("value" in first).toBe(false);
    expect(ahead.take(1)).toEqual({ failed: true });
    expect(ahead.take(2)).toEqual({ tooLarge: 200 });
    const last = ahead.take(3);
    expect("bytes" in last && last.bytes.length).toBe(0);
  });

  it("parses what the fast path takes, and leaves the rest, files the caller claimed included, to the caller", () => {
    const dir = writeDomain({});
    const texts = [
      entity(1),
      "a: [1, 2\n", // broken YAML: the located parse owns the message
      "a: &x 1\nb: *x\n", // an anchor: alias expansion is bounded by the located parse only
      "a: .nan\nb: -0.0\n", // numbers JSON would change
      `a: ${"[".repeat(70)}${"]".repeat(70)}\n`, // deeper than the limit
      "- a\n- b\n", // not a mapping
    ];
    const paths = texts.map((t, i) => {
      const path = join(dir, `f${i}.yaml`);
      writeFileSync(path, t);
      return path;
    });
    const ahead = new ReadAhead(paths, 1 << 20, { parse: true });
    const first = ahead.take(0);
    expect("value" in first && first.value).toEqual({
      apiVersion: "charter/v1",
      kind: "Entity",
      metadata: { name: "e1", domain: "d" },
      spec: { fields: { title: { type: "string" } } },
    });
    for (let i = 1; i < texts.length; i++) {
      const r = ahead.take(i);
      expect("bytes" in r && Buffer.from(r.bytes).toString()).toBe(texts[i]);
      expect("value" in r).toBe(false);
    }
    // A batch the caller claims is not the thread's to read.
    const claimed = new ReadAhead(paths, 1 << 20, { parse: true });
    expect(claimed.claim()).toEqual({ start: 0, end: texts.length });
    expect(claimed.claim()).toBeNull();
  });

  it("loads a large domain with the reader thread exactly as file by file, broken files included", () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1200; i++) files[`entities/e${String(i).padStart(4, "0")}.contract.yaml`] = entity(i);
    // Files only the located parse takes, spread over the batches of both threads.
    for (let i = 0; i < 1200; i += 97)
      files[`entities/e${String(i).padStart(4, "0")}.contract.yaml`] = `${entity(i)}    size: {type: number, default: .inf}\n`;
    files["entities/e0500.contract.yaml"] = "apiVersion: charter/v1\nkind: [Entity\n";
    const dir = writeDomain(files);
    writeFileSync(join(dir, "entities/zz_bad.contract.yaml"), Buffer.from([0x6b, 0x3a, 0x20, 0xff, 0x0a]));
    writeFileSync(join(dir, "entities/zz_bom.contract.yaml"), `\ufeff${entity(9999)}`);
    const all = loadContracts(dir);
    expect(all.files).toHaveLength(1202);
    expect(all.contracts).toHaveLength(1200);
    expect(all.findings).toEqual([
      expect.objectContaining({ code: "yaml.syntax", file: expect.stringContaining("e0500"), line: 3 }),
      expect.objectContaining({ code: "file.encoding", file: expect.stringContaining("zz_bad") }),
    ]);
    // Every contract exactly as a load of its file alone gives it (a single file takes no thread).
    const alone = (file: string) => loadContracts(join(dir, "entities", file.split("/").at(-1) as string)).contracts[0];
    for (const c of all.contracts) {
      const one = alone(c.file);
      expect(c.data).toEqual(one?.data);
      expect(c.source).toBe(one?.source);
    }
    expect(all.contracts[97]?.data.spec).toMatchObject({ fields: { size: { default: Number.POSITIVE_INFINITY } } });
    // The byte order mark is dropped either way.
    expect(all.contracts.at(-1)?.file).toContain("zz_bom");
    expect(all.contracts.at(-1)?.source.startsWith("apiVersion")).toBe(true);
  });
});
