import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCharter } from "../support/cli.js";

interface ExpectedFinding {
  file: string;
  line: number;
  column: number;
  path: string;
  message: string;
}

const expected = JSON.parse(readFileSync("examples/broken/expected.json", "utf8")) as Record<string, ExpectedFinding[]>;

describe("charter forge validate", () => {
  it("prints one line per contract and the totals, and exits 0 for a valid domain", () => {
    const r = runCharter(["forge", "validate", "examples/helpdesk"]);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.filter((l) => l.endsWith("  ok"))).toHaveLength(13);
    expect(lines).toContain("entity/helpdesk/ticket  examples/helpdesk/entities/ticket.contract.yaml  ok");
    expect(r.stdout).toContain("13 contracts, 13 valid, 0 invalid; 0 errors, 0 warnings");
    expect(r.stdout).toContain("Summary: 3 entities, 1 workflows, 3 routes, 3 pages");
    expect(r.stdout).not.toContain("\u001b[");
  });

  it.each(Object.keys(expected))("reports the broken example %s with its exact message, file and line, and exits 1", (name) => {
    const dir = `examples/broken/${name}`;
    const r = runCharter(["forge", "validate", dir, "--output", "json"]);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout) as { ok: boolean; errors: number; results: { file: string; findings: ExpectedFinding[] }[] };
    expect(out.ok).toBe(false);
    const findings = out.results
      .flatMap((x) => x.findings)
      .map((f) => ({ file: f.file.slice(dir.length + 1), line: f.line, column: f.column, path: f.path, message: f.message }));
    expect(findings).toEqual(expected[name]);
    const text = runCharter(["forge", "validate", dir]);
    const first = expected[name]?.[0] as ExpectedFinding;
    expect(text.stdout).toContain(`${dir}/${first.file}:${first.line}:${first.column}: error: ${first.message}`);
  });

  it("uses each error type of the classification table exactly once in the broken examples", () => {
    const wording: Record<string, RegExp> = {
      naming: /does not match '\^\[a-z\]\[a-z0-9_\]\*\$'/,
      fqn_format: /does not match '\^\(entity\|/,
      graph_edge: /does not match '\^\[A-Z\]\[A-Z0-9_\]\*\$'/,
      number_prefix: /does not match '\^\[A-Z\]\{2,6\}\$'/,
      missing_field: /is a required property/,
      schema_mismatch: /is not valid under any of the given schemas/,
      invalid_enum: /is not one of/,
      missing_reference: /unresolved reference/,
      dependency_cycle: /cycle/,
    };
    expect(Object.keys(expected).sort()).toEqual(Object.keys(wording).sort());
    for (const [type, re] of Object.entries(wording)) {
      expect(expected[type], type).toHaveLength(1);
      expect(expected[type]?.[0]?.message, type).toMatch(re);
    }
  });

  it("fails clearly for a missing path", () => {
    const r = runCharter(["forge", "validate", "no/such/dir"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("error: path not found: no/such/dir\n");
  });
});

describe("charter forge compile", () => {
  it("prints the summary and writes the IR as JSON", () => {
    const out = join(mkdtempSync(join(tmpdir(), "charter-ir-")), "ir.json");
    const r = runCharter(["forge", "compile", "examples/helpdesk", "--ir", out]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(
      "Compiled domain helpdesk: 13 contracts, 3 entities, 1 workflows, 3 routes, 3 pages, 1 agents, 1 mixins, 1 infra",
    );
    const ir = JSON.parse(readFileSync(out, "utf8")) as { irVersion: number; entities: unknown[] };
    expect(ir.irVersion).toBe(1);
    expect(ir.entities).toHaveLength(3);
  });

  it("refuses to compile a broken domain, listing the findings on stderr", () => {
    const r = runCharter(["forge", "compile", "examples/broken/naming"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("'ProductItem' does not match");
    expect(r.stderr).toContain("error: compilation failed: 1 error(s)");
  });
});

describe("command line conventions", () => {
  it.each([
    [["--help"]],
    [["forge", "--help"]],
    [["forge", "validate", "--help"]],
    [["forge", "compile", "--help"]],
    [["forge", "generate", "--help"]],
  ])("prints help for %j and exits 0", (args) => {
    const r = runCharter(args);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: charter/);
  });

  it("gives a usage error (exit 2) for unknown commands, flags, choices and missing arguments", () => {
    expect(runCharter(["frobnicate"])).toMatchObject({ status: 2 });
    expect(runCharter(["forge", "validate", "examples/helpdesk", "--bogus"])).toMatchObject({ status: 2 });
    expect(runCharter(["forge", "validate", "examples/helpdesk", "--output", "xml"]).status).toBe(2);
    const missing = runCharter(["forge", "validate"]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'path'");
    expect(
      runCharter(["forge", "generate", "examples/helpdesk", "--target", "cobol", "--output", mkdtempSync(join(tmpdir(), "x-"))]).status,
    ).toBe(2);
  });

  it("colours only when asked and never with NO_COLOR", () => {
    const forced = runCharter(["forge", "validate", "examples/broken/naming"], { env: { NO_COLOR: "", FORCE_COLOR: "1" } });
    expect(forced.stdout).toContain("\u001b[31m");
    const plain = runCharter(["forge", "validate", "examples/broken/naming"], { env: { NO_COLOR: "1", FORCE_COLOR: "1" } });
    expect(plain.stdout).not.toContain("\u001b[");
  });
});
