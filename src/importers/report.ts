import { formatFinding } from "../contracts/findings.js";
import { fidelityLines } from "./fidelity.js";
import { formatLocation } from "./model.js";
import type { ImportSummary } from "./pipeline.js";

/** The human summary of an import: counts, then every note and rejection with its reason. */
export function summaryText(s: ImportSummary): string {
  const out: string[] = [];
  const plural = (n: number, w: string): string => `${n} ${w}${n === 1 ? "" : "s"}`;
  out.push(`Read ${plural(s.files.length, "file")} (${s.format}): ${s.files.join(", ")}`);
  if (s.refused !== null) out.push(`Nothing written to ${s.directory}: ${s.refused}`);
  else
    out.push(
      `${s.dryRun ? "Would write" : "Wrote"} to ${s.directory}: ${plural(s.entities.length, "entity").replace("entitys", "entities")}, ${plural(s.workflows.length, "workflow")}, ${plural(s.routes.length, "route")}, ${plural(s.pages.length, "page")}`,
    );
  for (const w of s.written) out.push(`  ${w}`);
  out.push(s.llmStatus);
  const skipped = s.notes.filter((n) => n.kind === "skipped");
  const changed = s.notes.filter((n) => n.kind === "changed");
  if (changed.length > 0) {
    out.push(`Changed (${changed.length}):`);
    for (const n of changed) out.push(`  ${n.subject}: ${n.reason}`);
  }
  if (skipped.length > 0) {
    out.push(`Skipped (${skipped.length}):`);
    for (const n of skipped) out.push(`  ${n.subject}: ${n.reason}${n.location ? ` [${formatLocation(n.location)}]` : ""}`);
  }
  if (s.rejected.length > 0) {
    out.push(`Failed validation (${s.rejected.length}):`);
    for (const r of s.rejected) {
      out.push(`  ${r.fqn}${r.findings.length === 0 ? ": its entity failed validation" : ""}`);
      for (const f of r.findings) out.push(`    ${formatFinding(f)}`);
    }
  }
  out.push(...llmLines(s.llm));
  out.push(...fidelityLines(s.fidelity));
  return `${out.join("\n")}\n`;
}

/** The contracts with parts an LLM suggested, and which parts (the factory's summary and the extractor's review). */
export function llmLines(llm: ImportSummary["llm"]): string[] {
  if (llm.length === 0) return [];
  return [`From the LLM (${llm.length} contracts, review them):`, ...llm.map((l) => `  ${l.fqn}: ${l.paths.join(", ")}`)];
}

export function summaryJson(s: ImportSummary): string {
  return `${JSON.stringify(s, null, 2)}\n`;
}
