import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Command, Option } from "commander";
import { type CheckResult, checkDomain } from "../../compiler/index.js";
import { generateTarget, targetNames, UnknownTargetError, writeFiles } from "../../generators/index.js";
import { findingLine, paint, UserError, useColor } from "../output.js";

function requirePath(path: string): void {
  if (!existsSync(path)) throw new UserError(`path not found: ${path}`);
}

function outputOption(): Option {
  return new Option("-o, --output <format>", "output format").choices(["text", "json"]).default("text");
}

/** `charter forge ...`: the contract pipeline (validate, compile, generate). */
export function forgeCommand(): Command {
  const forge = new Command("forge").description("validate, compile and generate from contracts");

  forge
    .command("validate")
    .description("validate every *.contract.yaml under PATH (a domain directory or one file)")
    .argument("<path>", "domain directory or contract file")
    .addOption(outputOption())
    .action((path: string, opts: { output: string }) => {
      requirePath(path);
      const result = checkDomain(path);
      if (opts.output === "json") {
        process.stdout.write(`${JSON.stringify(validateJson(result), null, 2)}\n`);
      } else {
        printValidate(result);
      }
      process.exitCode = result.errors > 0 ? 1 : 0;
    });

  forge
    .command("compile")
    .description("compile PATH to the intermediate representation and print its summary")
    .argument("<path>", "domain directory or contract file")
    .option("--ir <file>", "write the IR as JSON to this file (- for standard output)")
    .addOption(outputOption())
    .action((path: string, opts: { ir?: string; output: string }) => {
      requirePath(path);
      const result = checkDomain(path);
      if (!result.ir) {
        for (const f of result.findings) process.stderr.write(`${findingLine(f, useColor(process.stderr))}\n`);
        throw new UserError(`compilation failed: ${result.errors} error(s)`);
      }
      const irJson = `${JSON.stringify(result.ir, null, 2)}\n`;
      if (opts.ir === "-") {
        process.stdout.write(irJson);
        return;
      }
      if (opts.ir) {
        mkdirSync(dirname(opts.ir), { recursive: true });
        writeFileSync(opts.ir, irJson);
      }
      if (opts.output === "json") {
        process.stdout.write(
          `${JSON.stringify({ domain: result.ir.domain, summary: result.ir.summary, order: result.ir.graph.order }, null, 2)}\n`,
        );
        return;
      }
      const s = result.ir.summary;
      process.stdout.write(
        `Compiled domain ${result.ir.domain}: ${s.contracts} contracts, ${s.entities} entities, ${s.workflows} workflows, ${s.routes} routes, ${s.pages} pages, ${s.agents} agents, ${s.mixins} mixins, ${s.infra} infra\n`,
      );
      process.stdout.write(`Order: ${result.ir.graph.order.join(", ")}\n`);
      if (opts.ir) process.stdout.write(`IR written to ${opts.ir}\n`);
      for (const f of result.findings) process.stderr.write(`${findingLine(f, useColor(process.stderr))}\n`);
    });

  forge
    .command("generate")
    .description("generate code from the contracts under PATH")
    .argument("<path>", "domain directory or contract file")
    .requiredOption("-t, --target <target>", `generation target (${targetNames().join(", ")})`)
    .option("--output <dir>", "output directory", "runtime")
    .option("--check", "write nothing; exit 1 when files on disk differ from what would be generated")
    .option("--dry-run", "write nothing; list what would change")
    .action((path: string, opts: { target: string; output: string; check?: boolean; dryRun?: boolean }) => {
      requirePath(path);
      const result = checkDomain(path);
      if (!result.ir) {
        for (const f of result.findings) process.stderr.write(`${findingLine(f, useColor(process.stderr))}\n`);
        throw new UserError(`generation refused: the contracts have ${result.errors} error(s)`);
      }
      let files: ReturnType<typeof generateTarget>;
      try {
        files = generateTarget(result.ir, opts.target, opts.output);
      } catch (e) {
        if (e instanceof UnknownTargetError) throw new UserError(e.message, 2);
        throw e;
      }
      const dry = opts.check === true || opts.dryRun === true;
      const written = writeFiles(opts.output, files, { dryRun: dry });
      const verb = dry ? "would write" : "wrote";
      for (const p of written.written) process.stdout.write(`${verb} ${opts.output}/${p}\n`);
      process.stdout.write(
        `${opts.target}: ${files.length} files, ${written.written.length} ${dry ? "differ" : "written"}, ${written.unchanged.length} unchanged\n`,
      );
      for (const line of generationNotes(files)) process.stdout.write(`${line}\n`);
      if (opts.check && written.written.length > 0) process.exitCode = 1;
    });

  return forge;
}

/**
 * Generators flag what a user must notice (a destructive migration step, say) with a line
 * `-- charter: WARNING ...` or `# charter: WARNING ...` in the file; the CLI repeats those lines.
 */
function generationNotes(files: readonly { path: string; content: string }[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    for (const line of f.content.split("\n")) {
      const m = /^(?:--|#|\/\/) charter: (WARNING .*)$/.exec(line);
      if (m) out.push(`${f.path}: ${m[1]}`);
    }
  }
  return out;
}

function validateJson(r: CheckResult): unknown {
  return {
    ok: r.errors === 0,
    contracts: r.contracts.length,
    errors: r.errors,
    warnings: r.warnings,
    results: r.contracts.map((c) => ({ file: c.file, fqn: c.fqn, ok: c.ok, findings: c.findings })),
    summary: r.ir?.summary ?? null,
  };
}

function printValidate(r: CheckResult): void {
  const color = useColor();
  for (const c of r.contracts) {
    const status = c.ok ? paint("ok", "green", color) : paint("FAILED", "red", color);
    process.stdout.write(`${c.fqn ?? "(unreadable)"}  ${c.file}  ${status}\n`);
    for (const f of c.findings) process.stdout.write(`  ${findingLine(f, color)}\n`);
  }
  const orphan = r.findings.filter((f) => !r.contracts.some((c) => c.file === f.file));
  for (const f of orphan) process.stdout.write(`${findingLine(f, color)}\n`);
  const failed = r.contracts.filter((c) => !c.ok).length;
  process.stdout.write(
    `\n${r.contracts.length} contracts, ${r.contracts.length - failed} valid, ${failed} invalid; ${r.errors} errors, ${r.warnings} warnings\n`,
  );
  if (r.ir) {
    const s = r.ir.summary;
    process.stdout.write(`Summary: ${s.entities} entities, ${s.workflows} workflows, ${s.routes} routes, ${s.pages} pages\n`);
  }
}
