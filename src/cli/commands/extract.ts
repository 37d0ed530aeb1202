import { Command } from "commander";
import { topologicalOrder } from "../../compiler/graph.js";
import { formatFinding } from "../../contracts/findings.js";
import type { PlannedContract } from "../../importers/convert.js";
import { ImportError } from "../../importers/model.js";
import { UserError } from "../output.js";
import { importTarget, withImportOptions, writeFidelityReport } from "./factory.js";

interface ExtractOptions {
  domain: string;
  output?: string;
  format: string;
  yes?: boolean;
  force?: boolean;
  routes?: boolean;
  pages?: boolean;
  workflows: boolean;
  llm: boolean;
  report?: string;
}

/** `charter extract PATH --domain D`: reverse-engineer a code base into contracts, entity by entity. */
export function extractCommand(): Command {
  const command = new Command("extract")
    .description("reverse-engineer contracts from an existing code base (SQLAlchemy/SQLModel, Django, FastAPI, TypeORM, Express, Prisma)")
    .argument("<path>", "the code base (a directory or one file)")
    .option("-y, --yes", "accept every entity without asking")
    .option("--routes", "a Route per entity (routes found in the code base are used anyway)");
  return withImportOptions(command).action(async (path: string, opts: ExtractOptions) => {
    try {
      await runExtract(path, opts);
    } catch (e) {
      if (e instanceof ImportError) throw new UserError(e.message);
      throw e;
    }
  });
}

type ImportTarget = ReturnType<typeof importTarget>;

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Plan the contracts, have each entity reviewed, then report what was written and how faithfully. */
async function runExtract(path: string, opts: ExtractOptions): Promise<void> {
  const target = importTarget(opts);
  const plan = await planContracts(path, opts, target);
  const { refuseOverwrite } = await import("../../importers/write.js");
  const { reviewEntities } = await import("../../importers/extract/review.js");
  refuseOverwrite(plan.contracts, target.directory, opts.force === true);
  const units = entityUnits(plan.contracts);
  const outcome = await reviewEntities(units, target.directory, {
    yes: opts.yes === true,
    input: process.stdin,
    // With --format json, stdout carries only the JSON summary; the review talks on stderr.
    output: target.json ? process.stderr : process.stdout,
  });
  const { fidelityReport, fidelityLines } = await import("../../importers/fidelity.js");
  const accepted = new Set(outcome.accepted);
  const fidelity = fidelityReport(
    plan.model,
    plan.checked.accepted.filter((c) => accepted.has(c.entity)),
    plan.conversion.notes,
    plan.conversion.trace,
  );
  if (opts.report) writeFidelityReport(opts.report, fidelity);
  const { conversion, frameworks, model } = plan;
  const summary = {
    path,
    domain: opts.domain,
    directory: target.directory,
    frameworks,
    files: model.files,
    accepted: outcome.accepted,
    skipped: outcome.skipped,
    written: outcome.written,
    interrupted: outcome.interrupted,
    llm: outcome.llm,
    notes: conversion.notes,
    fidelity,
  };
  if (target.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else {
    process.stdout.write(
      `\n${outcome.interrupted ? "Interrupted" : "Done"}: ${outcome.accepted.length} accepted, ${outcome.skipped.length} skipped, ${units.length - outcome.accepted.length - outcome.skipped.length} not reviewed; ${outcome.written.length} files in ${target.directory}\n`,
    );
    for (const n of conversion.notes) process.stdout.write(`  ${n.kind}: ${n.subject}: ${n.reason}\n`);
    process.stdout.write(`${fidelityLines(fidelity).join("\n")}\n`);
  }
  if (outcome.interrupted) process.exitCode = 130;
}

/**
 * Discover, extract, convert, enrich and check: the contracts to review. All or nothing: a plan
 * with a contract that fails validation, or with no entity, writes nothing.
 */
async function planContracts(path: string, opts: ExtractOptions, target: ImportTarget) {
  // The parsers (the TypeScript compiler among them) load on use: other commands never pay for them.
  const { convertModel } = await import("../../importers/convert.js");
  const { discover, extractModel } = await import("../../importers/extract/index.js");
  const { maybeEnrich, refusal } = await import("../../importers/pipeline.js");
  const { checkPlanned } = await import("../../importers/check.js");
  progress("[1/4] discover");
  const found = discover(path);
  progress(`  ${found.python.length} Python, ${found.typescript.length} TypeScript, ${found.prisma.length} Prisma files`);
  progress("[2/4] entities  [3/4] relations and workflows  [4/4] routes and pages");
  const { model, frameworks } = await extractModel(found, (l) => progress(`  ${l}`));
  progress(`  frameworks: ${frameworks.join(", ") || "none recognised"}`);
  const options = {
    domain: opts.domain,
    directory: target.directory,
    routes: opts.routes === true ? ("all" as const) : ("operations" as const),
    pages: opts.pages === true,
    workflows: opts.workflows,
  };
  const conversion = convertModel(model, options);
  const enriched = await maybeEnrich(conversion.contracts, options, opts.llm, path);
  progress(`  ${enriched.llm}`);
  conversion.notes.push(...enriched.notes);
  const checked = checkPlanned(enriched.contracts, target.directory);
  const refused = refusal(checked);
  if (refused !== null) {
    for (const n of conversion.notes) process.stderr.write(`  ${n.kind}: ${n.subject}: ${n.reason}\n`);
    for (const r of checked.rejected) for (const f of r.findings) process.stderr.write(`  ${formatFinding(f)}\n`);
    throw new UserError(`nothing written to ${target.directory}: ${refused}`);
  }
  return { model, frameworks, conversion, contracts: enriched.contracts, checked };
}

/** Contracts grouped by entity, referenced entities first, so each decision sees its targets decided. */
function entityUnits(contracts: readonly PlannedContract[]): PlannedContract[][] {
  const entities = contracts.filter((c) => c.kind === "Entity");
  const edges = entities.flatMap((e) =>
    Object.values((e.data.spec as { fields: Record<string, { references?: { entity?: string } }> }).fields)
      .map((f) => f.references?.entity)
      .filter((t): t is string => t !== undefined && t !== e.fqn)
      .map((to) => ({ from: e.fqn, to, via: "reference" as const })),
  );
  const { order, rest } = topologicalOrder(
    entities.map((e) => e.fqn),
    edges,
  );
  // Kahn's order puts dependencies first when edges point from dependent to dependency.
  return [...order, ...rest].map((fqn) => {
    const name = entities.find((e) => e.fqn === fqn)?.entity;
    const unit = contracts.filter((c) => c.entity === name);
    return [
      ...unit.filter((c) => c.kind === "Workflow"),
      ...unit.filter((c) => c.kind === "Entity"),
      ...unit.filter((c) => c.kind !== "Workflow" && c.kind !== "Entity"),
    ];
  });
}
