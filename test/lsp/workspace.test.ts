import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/index.js";
import type { Finding } from "../../src/contracts/index.js";
import { DOMAIN_WIDE_CODES, Workspace } from "../../src/lsp/workspace.js";

const roots = [
  resolve("examples/helpdesk"),
  ...readdirSync(resolve("examples/broken"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => resolve("examples/broken", d.name)),
];

const key = (f: Finding): string => JSON.stringify([f.code, f.message, f.line, f.column, f.severity]);

/** checkDomain's findings of `absPath`, the domain-wide ones left out (the full check owns those). */
function expected(root: string, absPath: string, sources?: Map<string, string>): string[] {
  return checkDomain(root, { sources })
    .findings.filter((f) => resolve(f.file) === absPath && !DOMAIN_WIDE_CODES.has(f.code))
    .map(key);
}

describe("the language server's incremental check", () => {
  it.each(roots)("finds on every file of %s what checkDomain finds, checking only the affected files", (root) => {
    const ws = new Workspace(root);
    ws.load();
    for (const absPath of ws.entries.keys()) {
      const affected = ws.affectedBy([absPath]);
      expect(affected.size).toBeLessThanOrEqual(ws.entries.size);
      const scoped = ws.checkScope(affected);
      for (const p of affected) expect((scoped.get(p) ?? []).map(key), p).toEqual(expected(root, p));
    }
  });

  it("re-checks an edit's dependents, and only the contracts it can affect", () => {
    const root = mkdtempSync(join(tmpdir(), "charter-ws-"));
    try {
      cpSync(resolve("examples/helpdesk"), root, { recursive: true });
      const ws = new Workspace(root);
      ws.load();
      const customer = join(root, "entities/customer.contract.yaml");
      const text = readFileSync(customer, "utf8").replace("name: customer\n", "name: client\n");
      ws.overlays.set(customer, text);
      const former = ws.update(customer);
      const affected = ws.affectedBy([customer], [former]);
      const rel = [...affected].map((p) => p.slice(root.length + 1)).sort();
      expect(rel).toEqual([
        "entities/customer.contract.yaml",
        "entities/ticket.contract.yaml",
        "pages/customers.contract.yaml",
        "routes/customer_api.contract.yaml",
      ]);
      const scoped = ws.checkScope(affected);
      const sources = new Map([[customer, text]]);
      for (const p of affected) expect((scoped.get(p) ?? []).map(key), p).toEqual(expected(root, p, sources));
      expect(scoped.get(join(root, "entities/ticket.contract.yaml"))?.map((f) => f.code)).toContain("ref.unresolved");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
