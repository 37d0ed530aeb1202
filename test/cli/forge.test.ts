import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
    const r = runCharter(["forge", "validate", dir, "--format", "json"]);
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

  it("exits quietly when its reader goes away (EPIPE), as in `| head -c 1`", () => {
    // A report far larger than a pipe's buffer: `head` leaves while charter is still writing.
    const dir = mkdtempSync(join(tmpdir(), "charter-epipe-"));
    for (let i = 0; i < 2000; i++) {
      const name = `thing_${i}`;
      const text = [
        "apiVersion: charter/v1",
        "kind: Entity",
        "metadata:",
        `  name: ${name}`,
        "  domain: pipe",
        "spec:",
        "  fields:",
        "    title: {type: string}",
        "",
      ];
      writeFileSync(join(dir, `${name}.contract.yaml`), text.join("\n"));
    }
    const charter = `"${process.execPath}" dist/cli/charter.js forge validate "${dir}" --format json`;
    const r = spawnSync("bash", ["-c", `${charter} | head -c 1 >/dev/null; echo "status=$\{PIPESTATUS[0]}" >&2`], { encoding: "utf8" });
    expect(r.stderr).not.toContain("EPIPE");
    expect(r.stderr.trim()).toBe("status=0");
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses the helpdesk without the customers' Route, at the Page that still needs it", () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-no-route-"));
    cpSync("examples/helpdesk", dir, { recursive: true });
    rmSync(join(dir, "routes/customer_api.contract.yaml"));
    const r = runCharter(["forge", "validate", dir]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      /pages\/customers\.contract\.yaml:\d+:\d+: error: no Route serves entity\/helpdesk\/customer, and the page needs its list, get, create, update, delete operations/,
    );
    rmSync(dir, { recursive: true, force: true });
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

describe("report formats", () => {
  it("prints validate and compile as JSON with --format json", () => {
    const viaFormat = runCharter(["forge", "validate", "examples/helpdesk", "--format", "json"]);
    expect(viaFormat.status).toBe(0);
    const report = JSON.parse(viaFormat.stdout) as { ok: boolean; contracts: number };
    expect(report).toMatchObject({ ok: true, contracts: 13 });
    const compiled = JSON.parse(runCharter(["forge", "compile", "examples/helpdesk", "--format", "json"]).stdout) as { domain: string };
    expect(compiled.domain).toBe("helpdesk");
  });

  it("gives -o one meaning: the output folder of generate", () => {
    expect(runCharter(["forge", "validate", "examples/helpdesk", "-o", "json"]).status).toBe(2);
    const out = mkdtempSync(join(tmpdir(), "charter-o-"));
    const r = runCharter(["forge", "generate", "examples/helpdesk", "-t", "postgres", "-o", out, "--format", "json"]);
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { written: string[]; output: string };
    expect(report.written).toEqual(["backend/db/schema.sql"]);
    expect(existsSync(join(out, "backend/db/schema.sql"))).toBe(true);
  });
});

describe("charter forge generate: regeneration", () => {
  /** bench/backend-domain (entity `item`) plus, unless `withoutLabel`, an entity `label` with its route and page. */
  const domain = (withoutLabel: boolean): string => {
    const dir = join(mkdtempSync(join(tmpdir(), "charter-regen-")), "bench");
    cpSync("bench/backend-domain", dir, { recursive: true });
    if (withoutLabel) return dir;
    const put = (rel: string, text: string): void => {
      mkdirSync(join(dir, rel, ".."), { recursive: true });
      writeFileSync(join(dir, rel), `apiVersion: charter/v1\n${text}`);
    };
    put(
      "entities/label.contract.yaml",
      "kind: Entity\nmetadata: {name: label, domain: bench}\nspec:\n  fields:\n    title: {type: string, required: true}\n",
    );
    put(
      "routes/label_api.contract.yaml",
      "kind: Route\nmetadata: {name: label_api, domain: bench}\nspec:\n  entity: entity/bench/label\n  endpoints:\n    - {method: GET, path: /}\n",
    );
    put(
      "pages/labels.contract.yaml",
      "kind: Page\nmetadata: {name: labels, domain: bench}\nspec:\n  route: /labels\n  entity: entity/bench/label\n  generation_tier: mechanical\n",
    );
    return dir;
  };
  const domainWithout = (entity: string): string => {
    expect(entity).toBe("label");
    return domain(true);
  };

  it("removes the files of a removed entity, reports them, and leaves a user's files alone", () => {
    const out = mkdtempSync(join(tmpdir(), "charter-regen-out-"));
    expect(runCharter(["forge", "generate", domain(false), "-t", "all", "-o", out]).status).toBe(0);
    expect(existsSync(join(out, "backend/app/models/label.py"))).toBe(true);
    expect(existsSync(join(out, "frontend/src/app/labels/page.tsx"))).toBe(true);
    writeFileSync(join(out, "backend/app/custom_reports.py"), "# mine\n");
    const smaller = domainWithout("label");
    const r = runCharter(["forge", "generate", smaller, "-t", "all", "-o", out]);
    expect(r.status, r.stderr).toBe(0);
    // Without pages the frontend target produces nothing, so the whole frontend goes but for the
    // user's own file (written once, then theirs: never pruned).
    for (const gone of ["backend/app/models/label.py", "backend/app/routes/labels.py", "frontend/src/app/labels/page.tsx"]) {
      expect(existsSync(join(out, gone)), gone).toBe(false);
      expect(r.stdout).toContain(`removed stale ${out}/${gone}`);
    }
    expect(
      readdirSync(join(out, "frontend"), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name),
    ).toEqual(["nav.tsx"]);
    expect(existsSync(join(out, "frontend/src/custom/nav.tsx"))).toBe(true);
    expect(existsSync(join(out, "backend/app/custom_reports.py"))).toBe(true);
    // Past migrations stay: they are history the database has applied.
    expect(existsSync(join(out, "backend/db/migrations/0001_initial.sql"))).toBe(true);
    expect(runCharter(["forge", "generate", smaller, "-t", "all", "-o", out, "--check"]).status).toBe(0);
  });

  it("reports a hand edit and leaves it, --check fails on it and on stale files, --force overwrites", () => {
    const out = mkdtempSync(join(tmpdir(), "charter-regen-edit-"));
    runCharter(["forge", "generate", "examples/helpdesk", "-t", "fastapi-prod", "-o", out]);
    const file = join(out, "backend/app/models/ticket.py");
    const edited = readFileSync(file, "utf8").replace("class TicketCreate", "# my tweak\nclass TicketCreate");
    writeFileSync(file, edited);
    const again = runCharter(["forge", "generate", "examples/helpdesk", "-t", "fastapi-prod", "-o", out]);
    expect(again.status).toBe(0);
    expect(again.stderr).toContain(
      "backend/app/models/ticket.py was edited by hand: left alone. Move the change into a module of your own",
    );
    expect(again.stdout).toContain("1 edited by hand, left alone");
    expect(readFileSync(file, "utf8")).toBe(edited);

    const check = runCharter(["forge", "generate", "examples/helpdesk", "-t", "fastapi-prod", "-o", out, "--check", "--format", "json"]);
    expect(check.status).toBe(1);
    const report = JSON.parse(check.stdout) as { kept: { path: string; reason: string }[]; removed: string[] };
    expect(report.kept).toEqual([expect.objectContaining({ path: "backend/app/models/ticket.py", reason: "edited" })]);

    const stale = runCharter(["forge", "generate", "bench/backend-domain", "-t", "fastapi-prod", "-o", out, "--check", "--format", "json"]);
    expect(stale.status).toBe(1);
    expect((JSON.parse(stale.stdout) as { removed: string[] }).removed).toContain("backend/app/models/customer.py");
    expect(existsSync(join(out, "backend/app/models/customer.py"))).toBe(true);

    const forced = runCharter(["forge", "generate", "examples/helpdesk", "-t", "fastapi-prod", "-o", out, "--force"]);
    expect(forced.status).toBe(0);
    expect(readFileSync(file, "utf8")).not.toContain("# my tweak");
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
