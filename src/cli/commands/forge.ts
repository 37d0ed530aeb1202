import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { setFlagsFromString } from "node:v8";
import { Command } from "commander";
import { type CheckResult, checkDomain } from "../../compiler/index.js";
import {
  type GeneratedFile,
  GenerationThreads,
  type KeptFile,
  resolveTargets,
  targetNames,
  UnknownTargetError,
  type WriteResult,
  writeFiles,
} from "../../generators/index.js";
import { findingLine, formatOption, paint, UserError, useColor } from "../output.js";

function requirePath(path: string): void {
  if (!existsSync(path)) throw new UserError(`path not found: ${path}`);
}

/** `charter forge ...`: the contract pipeline (validate, compile, generate). */
export function forgeCommand(): Command {
  const forge = new Command("forge").description("validate, compile and generate from contracts");

  forge
    .command("validate")
    .description("validate every *.contract.yaml under PATH (a domain directory or one file)")
    .argument("<path>", "domain directory or contract file")
    .addOption(formatOption())
    .action(validateAction);

  forge
    .command("compile")
    .description("compile PATH to the intermediate representation and print its summary")
    .argument("<path>", "domain directory or contract file")
    .option("--ir <file>", "write the IR as JSON to this file (- for standard output)")
    .addOption(formatOption())
    .action(compileAction);

  forge
    .command("generate")
    .description("generate code from the contracts under PATH")
    .argument("<path>", "domain directory or contract file")
    .requiredOption("-t, --target <target>", `generation target (${targetNames().join(", ")})`)
    .option("-o, --output <dir>", "output directory", "runtime")
    .option("--check", "write nothing; exit 1 when files on disk differ, are stale or were edited by hand")
    .option("--dry-run", "write nothing; list what would change")
    .option("--force", "overwrite or remove generated files even when they were edited by hand")
    .addOption(formatOption())
    .action(generateAction);

  return forge;
}

/** `forge validate`: every finding, as text or JSON; exit 1 on an error. */
function validateAction(path: string, opts: { format: string }): void {
  requirePath(path);
  const result = checkDomain(path, { findingsOnly: true });
  if (opts.format === "json") {
    process.stdout.write(`${JSON.stringify(validateJson(result), null, 2)}\n`);
  } else {
    printValidate(result);
  }
  process.exitCode = result.errors > 0 ? 1 : 0;
}

/** `forge compile`: the IR summary, and the IR itself when `--ir` asks for it. */
function compileAction(path: string, opts: { ir?: string; format: string }): void {
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
  if (opts.format === "json") {
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
}

/** V8's default is 132 KB of bytecode executed per function before it is considered for optimizing. */
const GENERATE_INTERRUPT_BUDGET = 400 * 1024;

/** `forge generate`: generate the target and write (or, with --check or --dry-run, compare) it. */
async function generateAction(path: string, opts: GenerateOptions): Promise<void> {
  requirePath(path);
  // Generation runs thousands of distinct functions a few thousand times each. At V8's default
  // budget its optimizing compiler, on a background thread, compiles many of them for a run of
  // seconds that never pays it back, and takes the second core the generation thread needs
  // (2,000 entities on two cores: 4.7 s of CPU instead of 5.5, 2.8 s wall instead of 3.1). Set
  // here, for generate alone: validate's few hot parsing loops want the default (2.7 s against 2.9).
  setFlagsFromString(`--interrupt-budget=${GENERATE_INTERRUPT_BUDGET}`);
  // Started first: the second thread loads its generators while this one loads the contracts.
  const threads = GenerationThreads.start(opts.target);
  let result: CheckResult;
  try {
    result = checkDomain(path);
  } catch (e) {
    threads.close();
    throw e;
  }
  if (!result.ir) {
    threads.close();
    for (const f of result.findings) process.stderr.write(`${findingLine(f, useColor(process.stderr))}\n`);
    throw new UserError(`generation refused: the contracts have ${result.errors} error(s)`);
  }
  let files: GeneratedFile[];
  let targets: string[];
  try {
    targets = resolveTargets(opts.target).map((g) => g.target);
    files = await threads.generate(result.ir, opts.output);
  } catch (e) {
    if (e instanceof UnknownTargetError) throw new UserError(e.message, 2);
    throw e;
  }
  const dry = opts.check === true || opts.dryRun === true;
  const outcome = writeFiles(opts.output, files, { dryRun: dry, targets, ...(opts.force ? { force: true } : {}) });
  const report = generateReport(opts, files, outcome, dry);
  if (opts.format === "json") process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else printGenerate(opts, report, dry);
  const differs = outcome.written.length + outcome.removed.length + outcome.kept.length > 0;
  if (opts.check && differs) process.exitCode = 1;
}

interface GenerateOptions {
  target: string;
  output: string;
  check?: boolean;
  dryRun?: boolean;
  force?: boolean;
  format: string;
}

interface GenerateReport {
  target: string;
  output: string;
  files: number;
  written: string[];
  unchanged: number;
  removed: string[];
  kept: { path: string; reason: string; stale: boolean; message: string }[];
  warnings: { path: string; kind: string; message: string }[];
}

function generateReport(opts: GenerateOptions, files: readonly GeneratedFile[], r: WriteResult, dry: boolean): GenerateReport {
  // A set: looking each file up in the written list was quadratic (2,000 entities, 15,000 files).
  const written = new Set(r.written);
  return {
    target: opts.target,
    output: opts.output,
    files: files.length,
    written: r.written,
    unchanged: r.unchanged.length,
    removed: r.removed,
    kept: r.kept.map((k) => ({ ...k, message: keptMessage(k, dry) })),
    // Warnings of files left unchanged were reported when they were written.
    warnings: files
      .filter((f) => written.has(f.path))
      .flatMap((f) => (f.warnings ?? []).map((w) => ({ path: f.path, kind: w.kind, message: w.message }))),
  };
}

function keptMessage(k: KeptFile, dry: boolean): string {
  const left = dry ? "would be left alone" : "left alone";
  if (k.reason === "not-generated") {
    return k.stale
      ? `${k.path} has no @generated header: it is yours now, ${left} (no longer generated)`
      : `${k.path} exists without the @generated header: ${left}; move it away (or use --force) to generate it`;
  }
  const what = k.stale ? "is no longer generated but was edited by hand" : "was edited by hand";
  return `${k.path} ${what}: ${left}. Move the change into a module of your own (outside the generated files) or into the contract, then regenerate; --force ${k.stale ? "removes" : "overwrites"} it`;
}

/**
 * Output lines gathered and written in one go: a pipe (a script, the benchmarks) makes each
 * process.stdout.write a system call of its own, and a large generation reports 6,700 lines.
 */
class Lines {
  private readonly lines: string[] = [];
  add(line: string): void {
    this.lines.push(`${line}\n`);
  }
  flush(stream: NodeJS.WriteStream = process.stdout): void {
    if (this.lines.length > 0) stream.write(this.lines.join(""));
    this.lines.length = 0;
  }
}

function printGenerate(opts: GenerateOptions, report: GenerateReport, dry: boolean): void {
  const out = new Lines();
  for (const p of report.written) out.add(`${dry ? "would write" : "wrote"} ${opts.output}/${p}`);
  for (const p of report.removed) out.add(`${dry ? "would remove stale" : "removed stale"} ${opts.output}/${p}`);
  // Flushed before the warnings on stderr, so that a terminal shows both in this order.
  out.flush();
  for (const k of report.kept) process.stderr.write(`warning: ${opts.output}/${k.message}\n`);
  const parts = [
    `${report.files} files`,
    `${report.written.length} ${dry ? "differ" : "written"}`,
    `${report.unchanged} unchanged`,
    ...(report.removed.length > 0 ? [`${report.removed.length} stale ${dry ? "to remove" : "removed"}`] : []),
    ...(report.kept.length > 0 ? [`${report.kept.length} edited by hand, left alone`] : []),
  ];
  out.add(`${opts.target}: ${parts.join(", ")}`);
  for (const w of report.warnings) out.add(`${w.path}: WARNING ${w.kind}: ${w.message}`);
  out.flush();
}

function validateJson(r: CheckResult): unknown {
  return {
    ok: r.errors === 0,
    contracts: r.contracts.length,
    errors: r.errors,
    warnings: r.warnings,
    results: r.contracts.map((c) => ({ file: c.file, fqn: c.fqn, ok: c.ok, findings: c.findings })),
    summary: r.summary,
  };
}

function printValidate(r: CheckResult): void {
  const color = useColor();
  const out = new Lines();
  for (const c of r.contracts) {
    const status = c.ok ? paint("ok", "green", color) : paint("FAILED", "red", color);
    out.add(`${c.fqn ?? "(unreadable)"}  ${c.file}  ${status}`);
    for (const f of c.findings) out.add(`  ${findingLine(f, color)}`);
  }
  // A set of the files: looking each finding up in the list of contracts was quadratic.
  const files = new Set(r.contracts.map((c) => c.file));
  for (const f of r.findings) if (!files.has(f.file)) out.add(findingLine(f, color));
  const failed = r.contracts.filter((c) => !c.ok).length;
  out.add(
    `\n${r.contracts.length} contracts, ${r.contracts.length - failed} valid, ${failed} invalid; ${r.errors} errors, ${r.warnings} warnings`,
  );
  if (r.summary) {
    const s = r.summary;
    out.add(`Summary: ${s.entities} entities, ${s.workflows} workflows, ${s.routes} routes, ${s.pages} pages`);
  }
  out.flush();
}
