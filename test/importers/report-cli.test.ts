import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runCharter } from "../support/cli.js";
import { scratch } from "./support.js";

/**
 * `--report FILE` of `charter factory migrate` and `charter extract` (dist/, built): the fidelity
 * report as JSON, each fact with its status, the counts agreeing with the facts, and the changes
 * the input is known to need named with their reason.
 */
const FIX = resolve("test/fixtures/importers");

interface Report {
  carried: number;
  changed: number;
  left_out: number;
  silent: number;
  facts: { subject: string; fact: string; status: string; reason?: string; location?: { file: string; line?: number } }[];
}

function readReport(file: string): Report {
  const r = JSON.parse(readFileSync(file, "utf8")) as Report;
  for (const s of ["carried", "changed", "left_out", "silent"] as const) expect(r[s], s).toBe(r.facts.filter((f) => f.status === s).length);
  for (const f of r.facts.filter((x) => x.status === "changed" || x.status === "left_out"))
    expect(f.reason, `${f.fact} ${f.subject}`).toBeTruthy();
  return r;
}

describe("--report FILE", () => {
  it("charter factory migrate writes the SQL import's fidelity report", () => {
    const out = scratch("report-sql");
    const file = `${out}.json`;
    const r = runCharter(["factory", "migrate", join(FIX, "sql/shop-postgres.sql"), "--domain", "shop", "--output", out, "--report", file]);
    expect(r.status, r.stderr).toBe(0);
    const report = readReport(file);
    expect(report.silent).toBe(0);
    expect(report.carried).toBeGreaterThan(20);
    const fact = (subject: string, kind: string) => report.facts.find((f) => f.subject === subject && f.fact === kind);
    expect(fact("customers", "table")?.status).toBe("carried");
    expect(fact("customers.email", "length")?.status).toBe("carried");
    expect(fact("orders.customer_id", "on_delete")?.status).toBe("carried");
    // What changed or was left out carries its reason and the input's line.
    expect(fact("customers.email", "unique")).toMatchObject({ status: "left_out", location: { line: 5 } });
    expect(fact("customers.default_address_id", "reference")?.reason).toMatch(/cycle/);
    // The summary states the same counts.
    expect(r.stdout).toContain(`Fidelity: ${report.carried} carried, ${report.changed} changed, ${report.left_out} left out, 0 silent`);
  });

  it("charter extract writes the code base import's fidelity report", () => {
    const out = scratch("report-extract");
    const file = `${out}.json`;
    const r = runCharter([
      "extract",
      join(FIX, "codebases/django_app"),
      "--yes",
      "--domain",
      "library",
      "--output",
      out,
      "--no-llm",
      "--report",
      file,
    ]);
    expect(r.status, r.stderr).toBe(0);
    const report = readReport(file);
    expect(report.silent).toBe(0);
    const fact = (subject: string, kind: string) => report.facts.find((f) => f.subject === subject && f.fact === kind);
    expect(fact("Book.isbn", "length")?.status).toBe("carried");
    expect(fact("Book.author", "on_delete")?.status ?? fact("Book.author_id", "on_delete")?.status).toBe("carried");
    expect(report.facts.some((f) => f.location?.file.endsWith("models.py"))).toBe(true);
  });

  it("names the file it cannot write", () => {
    const out = scratch("report-bad");
    const r = runCharter([
      "factory",
      "migrate",
      join(FIX, "sql/shop-postgres.sql"),
      "--domain",
      "shop",
      "--output",
      out,
      "--report",
      join(FIX, "sql/shop-postgres.sql", "r.json"),
    ]);
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain("shop-postgres.sql/r.json");
  });
});
