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
    const first = ahead.next();
    expect("bytes" in first && Buffer.from(first.bytes).toString()).toBe("first");
    expect(ahead.next()).toEqual({ failed: true });
    expect(ahead.next()).toEqual({ tooLarge: 200 });
    const last = ahead.next();
    expect("bytes" in last && last.bytes.length).toBe(0);
  });

  it("loads a large domain with the reader thread exactly as file by file, broken files included", () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1200; i++) files[`entities/e${String(i).padStart(4, "0")}.contract.yaml`] = entity(i);
    const dir = writeDomain(files);
    writeFileSync(join(dir, "entities/zz_bad.contract.yaml"), Buffer.from([0x6b, 0x3a, 0x20, 0xff, 0x0a]));
    writeFileSync(join(dir, "entities/zz_bom.contract.yaml"), `\ufeff${entity(9999)}`);
    const all = loadContracts(dir);
    expect(all.files).toHaveLength(1202);
    expect(all.contracts).toHaveLength(1201);
    expect(all.findings).toEqual([expect.objectContaining({ code: "file.encoding", file: expect.stringContaining("zz_bad") })]);
    // The same files one at a time (a single file takes no thread).
    const one = (name: string) => loadContracts(join(dir, "entities", name)).contracts[0]?.data;
    expect(all.contracts.at(-1)?.data).toEqual(one("zz_bom.contract.yaml"));
    expect(all.contracts[1100]?.data).toEqual(one("e1100.contract.yaml"));
    expect(all.contracts.at(-1)?.source.startsWith("apiVersion")).toBe(true);
  });
});
