import type { Finding } from "../contracts/findings.js";
import { selectProvider } from "../llm/providers.js";
import { type CheckedPlan, checkPlanned } from "./check.js";
import { type ConversionTrace, type ConvertOptions, convertModel, type PlannedContract } from "./convert.js";
import { type FidelityReport, fidelityReport } from "./fidelity.js";
import type { ImportModel, ImportNote } from "./model.js";
import { refuseOverwrite, writeContracts } from "./write.js";

/** What an import did, for the summary (text or `--output json`). */
export interface ImportSummary {
  format: string;
  domain: string;
  directory: string;
  files: string[];
  entities: string[];
  workflows: string[];
  routes: string[];
  pages: string[];
  written: string[];
  notes: ImportNote[];
  rejected: { fqn: string; file: string; findings: Finding[] }[];
  /** Contracts with parts an LLM suggested, and which parts. */
  llm: { fqn: string; paths: string[] }[];
  dryRun: boolean;
  /** Why nothing was written, when the plan was refused as a whole (the command then exits 1). */
  refused: string | null;
  /** Whether an LLM was asked, and what came of it. */
  llmStatus: string;
  /** Every fact of the input carried, changed or left out (issue 38); `silent` counts the bugs. */
  fidelity: FidelityReport;
}

/** A plan: the checked contracts, every note, the LLM's status and the conversion's naming. */
export interface Plan {
  checked: CheckedPlan;
  notes: ImportNote[];
  llm: string;
  trace: ConversionTrace;
}

export interface PlanOptions extends ConvertOptions {
  directory: string;
}

/**
 * Converts, enriches with the LLM when one is configured (and not turned off), and validates;
 * nothing is written. Without a provider the deterministic conversion is the result.
 */
export async function planImport(model: ImportModel, options: PlanOptions & { llm: boolean }): Promise<Plan> {
  const conversion = convertModel(model, options);
  const { contracts, notes, llm } = await maybeEnrich(conversion.contracts, options, options.llm, model.files.join(", "));
  return { checked: checkPlanned(contracts, options.directory), notes: [...conversion.notes, ...notes], llm, trace: conversion.trace };
}

/** The LLM step shared by the factory and the extractor. */
export async function maybeEnrich(
  contracts: PlannedContract[],
  options: PlanOptions,
  wanted: boolean,
  source: string,
): Promise<{ contracts: PlannedContract[]; notes: ImportNote[]; llm: string }> {
  if (!wanted) return { contracts, notes: [], llm: "LLM: off (--no-llm); deterministic conversion" };
  const provider = selectProvider();
  if (!provider.ok) return { contracts, notes: [], llm: "LLM: none configured; deterministic conversion" };
  const { enrichContracts } = await import("./enrich.js");
  const e = await enrichContracts(contracts, options.directory, options.domain, provider, source);
  return { contracts: e.contracts, notes: e.notes, llm: e.status };
}

/**
 * All or nothing: when any contract fails validation, or there is no entity at all, nothing is
 * written and the summary says why; otherwise overwrites are refused (unless forced) and every
 * contract is written at once.
 */
export function writeImport(model: ImportModel, plan: Plan, options: PlanOptions & { force: boolean; dryRun: boolean }): ImportSummary {
  const refused = refusal(plan.checked);
  if (refused !== null) return { ...summarise(model, plan, options, []), refused };
  refuseOverwrite(plan.checked.accepted, options.directory, options.force || options.dryRun);
  const written = options.dryRun ? [] : writeContracts(plan.checked.accepted, options.directory);
  return summarise(model, plan, options, written);
}

/** Why a plan must not be written at all, or null. */
export function refusal(checked: CheckedPlan): string | null {
  if (checked.rejected.length > 0)
    return `${checked.rejected.length} contract(s) failed validation (listed below); a partial domain is never written`;
  if (!checked.accepted.some((c) => c.kind === "Entity")) return "the input yields no entity (see the notes for what was left out)";
  return null;
}

export function summarise(model: ImportModel, plan: Plan, options: PlanOptions & { dryRun: boolean }, written: string[]): ImportSummary {
  const { checked, notes } = plan;
  const names = (k: PlannedContract["kind"]): string[] => checked.accepted.filter((c) => c.kind === k).map((c) => c.name);
  const allNotes = [
    ...notes,
    ...checked.unlinked.map(
      (u): ImportNote => ({
        kind: "changed",
        subject: u.split(" -> ")[0] ?? u,
        reason: `reference to ${u.split(" -> ")[1]} removed: that contract was not written`,
        fact: "reference",
      }),
    ),
  ];
  return {
    format: model.format,
    domain: options.domain,
    directory: options.directory,
    files: model.files,
    entities: names("Entity"),
    workflows: names("Workflow"),
    routes: names("Route"),
    pages: names("Page"),
    written,
    notes: allNotes,
    rejected: checked.rejected.map((r) => ({ fqn: r.contract.fqn, file: r.contract.file, findings: r.findings })),
    llm: checked.accepted.filter((c) => (c.fromLlm ?? []).length > 0).map((c) => ({ fqn: c.fqn, paths: c.fromLlm ?? [] })),
    dryRun: options.dryRun,
    refused: null,
    llmStatus: plan.llm,
    // A refused plan is judged as planned: the report says what the import would have carried.
    fidelity: fidelityReport(model, [...checked.accepted, ...checked.rejected.map((r) => r.contract)], allNotes, plan.trace),
  };
}
