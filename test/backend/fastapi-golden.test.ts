import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import type { DomainIR } from "../../src/compiler/ir.js";
import { parseExpression } from "../../src/contracts/expression.js";
import { REQUIREMENTS } from "../../src/generators/fastapi/app-modules.js";
import { DOCS_STATIC_DIR } from "../../src/generators/fastapi/docs-assets.js";
import { generateModels, rangeFields } from "../../src/generators/fastapi/models.js";
import { compileExpr } from "../../src/generators/fastapi/python.js";
import { blockHeader, hashHeader, ownedHeader, slashHeader } from "../../src/generators/header.js";
import { generateTarget } from "../../src/generators/registry.js";
import { writeFiles } from "../../src/generators/writer.js";
import { expectGolden } from "../support/golden.js";
import { ensureVenv, VENV_BIN } from "../support/python.js";

/** Pinned like ruff (scripts/setup.sh installs the same). */
const MYPY_REQUIREMENT = "mypy==2.4.1";

function helpdesk(): DomainIR {
  const { ir, findings } = checkDomain("examples/helpdesk");
  if (!ir) throw new Error(findings.map((f) => f.message).join("\n"));
  return ir;
}

describe("fastapi-prod generator", () => {
  it("matches the golden files of the helpdesk example", () => {
    const files = generateTarget(helpdesk(), "fastapi-prod", "/nonexistent");
    // The vendored documentation bundles (3 MB) are checked against their packages below instead.
    expectGolden(
      "test/golden/fastapi-prod/helpdesk",
      files.filter((f) => !f.path.startsWith(`backend/${DOCS_STATIC_DIR}/`)),
    );
  });

  it("vendors Swagger UI and ReDoc byte for byte from the pinned npm packages, header first", () => {
    const files = generateTarget(helpdesk(), "fastapi-prod", "/nonexistent");
    const vendored = (name: string) => files.find((f) => f.path === `backend/${DOCS_STATIC_DIR}/${name}`)?.content;
    const pkg = (spec: string) => readFileSync(createRequire(import.meta.url).resolve(spec), "utf8");
    // The bundles end without a newline; the copies get one, as every generated file.
    expect(vendored("swagger-ui-bundle.js")).toBe(`${slashHeader()}${pkg("swagger-ui-dist/swagger-ui-bundle.js")}\n`);
    expect(vendored("swagger-ui.css")).toBe(`${blockHeader()}${pkg("swagger-ui-dist/swagger-ui.css")}\n`);
    expect(vendored("redoc.standalone.js")).toBe(`${slashHeader()}${pkg("redoc/bundles/redoc.standalone.js")}\n`);
    const versions = JSON.parse(readFileSync("package.json", "utf8")).dependencies;
    // Exact pins: a caret would let two installs of Charter write different bundles.
    expect(versions["swagger-ui-dist"]).toMatch(/^\d+\.\d+\.\d+$/);
    expect(versions.redoc).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("is deterministic: two runs give the same bytes", () => {
    const a = generateTarget(helpdesk(), "fastapi-prod", "/nonexistent");
    const b = generateTarget(helpdesk(), "fastapi-prod", "/nonexistent");
    expect(b).toEqual(a);
    expect(a.length).toBeGreaterThan(30);
  });

  it("writes everything under backend/ with the @generated header, the user's extension points with theirs", () => {
    const owned: string[] = [];
    for (const f of generateTarget(helpdesk(), "fastapi-prod", "/nonexistent")) {
      expect(f.path.startsWith("backend/"), f.path).toBe(true);
      const header = f.path.endsWith(".js") ? slashHeader() : f.path.endsWith(".css") ? blockHeader() : hashHeader();
      if (f.owned) owned.push(f.path);
      expect(f.content.startsWith(f.owned ? ownedHeader(hashHeader) : header), f.path).toBe(true);
      expect(f.content.endsWith("\n"), f.path).toBe(true);
    }
    expect(owned).toEqual([
      "backend/app/custom/hooks/agent.py",
      "backend/app/custom/hooks/customer.py",
      "backend/app/custom/hooks/ticket.py",
      "backend/app/custom/routes.py",
    ]);
  });

  it("leaves the auth package out of a domain without an auth contract", () => {
    const ir = { ...helpdesk(), auth: null };
    const files = generateTarget(ir, "fastapi-prod", "/nonexistent");
    expect(files.some((f) => f.path.startsWith("backend/app/auth/"))).toBe(false);
    const config = files.find((f) => f.path === "backend/app/config.py")?.content ?? "";
    expect(config).toContain("AUTH_ENABLED: bool = False");
  });

  it("passes ruff check, ruff format --check and mypy, with and without auth", () => {
    ensureVenv([...REQUIREMENTS, MYPY_REQUIREMENT]);
    const dir = mkdtempSync(join(tmpdir(), "charter-ruff-"));
    try {
      writeFiles(join(dir, "auth"), generateTarget(helpdesk(), "fastapi-prod", dir));
      writeFiles(join(dir, "noauth"), generateTarget({ ...helpdesk(), auth: null }, "fastapi-prod", dir));
      for (const sub of ["auth", "noauth"]) {
        const tool = (name: string, args: string[]): string =>
          execFileSync(join(VENV_BIN, name), args, { cwd: join(dir, sub, "backend"), encoding: "utf8" });
        expect(tool("ruff", ["check", "--no-cache", "."])).toContain("All checks passed");
        expect(tool("ruff", ["format", "--check", "--no-cache", "."])).toMatch(/\d+ files already formatted/);
        expect(tool("mypy", ["--cache-dir", join(dir, ".mypy"), "app"])).toContain("Success: no issues found");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives dates and datetimes range filters, unless one would shadow a field of that name", () => {
    const ticket = helpdesk().entities.find((e) => e.name === "ticket");
    if (!ticket) throw new Error("no ticket entity");
    expect(rangeFields(ticket).map((f) => f.name)).toEqual(["created_at", "updated_at", "deleted_at", "due_at", "due_date"]);
    const dueDate = ticket.fields.find((f) => f.name === "due_date");
    if (!dueDate) throw new Error("no due_date field");
    // A real field named `due_date_to` keeps its own filters (a range of its own among them);
    // due_date gets no range at all.
    const shadowing = { ...ticket, fields: [...ticket.fields, { ...dueDate, name: "due_date_to", origin: "entity" }] };
    expect(rangeFields(shadowing).map((f) => f.name)).toEqual(["created_at", "updated_at", "deleted_at", "due_at", "due_date_to"]);
    const filters = generateModels(shadowing, undefined, undefined).split("class TicketFilters")[1] ?? "";
    expect(filters.match(/^ {4}due_date_to: .*$/gm)).toEqual(["    due_date_to: IsoDate | None = None"]);
    expect(filters).not.toContain("due_date_from");
    expect(filters).toContain("due_at_from: UtcDatetime | None");
  });

  it("compiles contract expressions to Python without eval", () => {
    const py = (src: string): string => compileExpr(parseExpression(src));
    expect(py("priority != 'critical' or len(description) >= 20")).toBe(
      'values.get("priority") != "critical" or expr.ge(expr.length(values.get("description")), 20)',
    );
    expect(py("x == null and not is_set(y)")).toBe('values.get("x") is None and not expr.is_set(values.get("y"))');
    expect(py("escalated == true")).toBe('values.get("escalated") is True');
    expect(py("a in ['x', 'y'] or b not in [1, 2]")).toBe(
      'expr.contains(["x", "y"], values.get("a")) or not expr.contains([1, 2], values.get("b"))',
    );
    expect(py("(a or b) and c")).toBe('(values.get("a") or values.get("b")) and values.get("c")');
    expect(py("n > -1")).toBe('expr.gt(values.get("n"), -1)');
  });
});
