import type { Finding } from "../contracts/findings.js";
import { type CheckedPlan, checkPlanned } from "./check.js";
import { type ConvertOptions, convertModel, type PlannedContract } from "./convert.js";
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
}

export interface PlanOptions extends ConvertOptions {
  directory: string;
}

/** Converts and validates; nothing is written. */
export function planImport(model: ImportModel, options: PlanOptions): { checked: CheckedPlan; notes: ImportNote[] } {
  const conversion = convertModel(model, options);
  return { checked: checkPlanned(conversion.contracts, options.directory), notes: conversion.notes };
}

/** Refuses overwrites (unless forced), then writes every accepted contract at once. */
export function writeImport(
  model: ImportModel,
  checked: CheckedPlan,
  notes: ImportNote[],
  options: PlanOptions & { force: boolean; dryRun: boolean },
): ImportSummary {
  refuseOverwrite(checked.accepted, options.directory, options.force);
  const written = options.dryRun ? [] : writeContracts(checked.accepted, options.directory);
  return summarise(model, checked, notes, options, written);
}

export function summarise(
  model: ImportModel,
  checked: CheckedPlan,
  notes: ImportNote[],
  options: PlanOptions & { dryRun: boolean },
  written: string[],
): ImportSummary {
  const names = (k: PlannedContract["kind"]): string[] => checked.accepted.filter((c) => c.kind === k).map((c) => c.name);
  const allNotes = [
    ...notes,
    ...checked.unlinked.map(
      (u): ImportNote => ({
        kind: "changed",
        subject: u.split(" -> ")[0] ?? u,
        reason: `reference to ${u.split(" -> ")[1]} removed: that contract was not written`,
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
  };
}
