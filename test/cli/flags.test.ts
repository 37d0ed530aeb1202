import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { charterProgram } from "../../src/cli/program.js";
import { runCharter } from "../support/cli.js";

/** Every command that runs an action, by its full name (`healer tickets`). */
function leafCommands(cmd: Command, path: string[] = []): [string, Command][] {
  if (cmd.commands.length === 0) return [[path.join(" "), cmd]];
  return cmd.commands.flatMap((sub) => leafCommands(sub, [...path, sub.name()]));
}

const commands = leafCommands(await charterProgram());

describe("-o/--output and --format mean the same thing in every command", () => {
  it("finds the commands", () => {
    expect(commands.map(([name]) => name)).toEqual(
      expect.arrayContaining(["forge generate", "healer tickets", "doctor", "factory migrate", "factory compare", "extract", "plan"]),
    );
  });

  it.each(commands)("%s: -o/--output names a folder, --format is text or json, nothing is hidden", (_name, cmd) => {
    for (const option of cmd.options) {
      if (option.long === "--output") {
        expect(option.short).toBe("-o");
        expect(option.flags).toBe("-o, --output <dir>");
      }
      if (option.short === "-o") expect(option.long).toBe("--output");
      if (option.long === "--format") expect(option.argChoices).toEqual(["text", "json"]);
      expect(option.hidden).toBe(false);
    }
  });

  it("refuses an unknown format, naming the allowed ones", () => {
    for (const args of [
      ["forge", "validate", "examples/helpdesk", "--format", "xml"],
      ["healer", "status", "--format", "xml"],
      ["doctor", "--format", "xml"],
    ]) {
      const r = runCharter(args);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("argument 'xml' is invalid. Allowed choices are text, json.");
    }
  });

  it("no longer takes --output for a format where there is no output folder", () => {
    const r = runCharter(["forge", "validate", "examples/helpdesk", "--output", "json"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown option '--output'");
    expect(r.stderr).toContain("hint: -o/--output names an output folder");
    const healer = runCharter(["healer", "status", "-o", "json"]);
    expect(healer.stderr).toContain("unknown option '-o'");
    expect(healer.stderr).toContain("hint: -o/--output names an output folder; the report format is --format text|json");
  });

  it("factory migrate writes to the --output folder and reports in --format", () => {
    const out = join(mkdtempSync(join(tmpdir(), "charter-flags-")), "json");
    const spec = "test/fixtures/importers/openapi/library.yaml";
    const r = runCharter(["factory", "migrate", spec, "--from", "openapi", "-d", "library", "-o", out, "--format", "json", "--no-llm"]);
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { directory: string; written: string[] };
    expect(summary.directory).toBe(out);
    expect(existsSync(out) && readdirSync(out).length > 0).toBe(true);
    const wrong = runCharter(["factory", "migrate", spec, "--from", "yaml", "-d", "library", "--dry-run", "--no-llm"]);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain("Allowed choices are openapi, sql, prisma.");
  });
});
