import type { Finding } from "../contracts/findings.js";
import { hasErrors, sortFindings } from "../contracts/findings.js";
import { envelopeFqn } from "../contracts/fqn.js";
import { type LoadedContract, type LoadOptions, loadContracts } from "../contracts/loader.js";
import { validateContractSchema } from "../contracts/schema.js";
import { type CompileOptions, compileDomain } from "./compile.js";
import type { DomainIR } from "./ir.js";

/** One line of `forge validate`: a contract file and what was found in it. */
export interface ContractReport {
  file: string;
  /** FQN when the envelope could be read. */
  fqn: string | null;
  findings: Finding[];
  ok: boolean;
}

export interface CheckResult {
  contracts: ContractReport[];
  /** Every finding, sorted by file and position. */
  findings: Finding[];
  errors: number;
  warnings: number;
  /** The compiled IR; null when any error exists, or when only the findings were asked for. */
  ir: DomainIR | null;
  /** The IR's summary (also when only the findings were asked for); null when any error exists. */
  summary: DomainIR["summary"] | null;
  /** The parsed contracts, for tools (the Healer) that patch them. */
  loaded: LoadedContract[];
}

/**
 * The whole front of the pipeline: load, validate against the schemas, check semantics, compile.
 * A long-running caller passes a ParseCache so that unchanged files are not parsed again, and an
 * editor its unsaved texts as `sources`; a caller that reports findings only says `findingsOnly`.
 */
export function checkDomain(path: string, options: LoadOptions & CompileOptions = {}): CheckResult {
  const { cache } = options;
  const load = loadContracts(path, options);
  const findings: Finding[] = load.findings.map((f) => ({ ...f }));
  const schemaValid: LoadedContract[] = [];
  const fqns = new Map(load.contracts.map((c) => [c, envelopeFqn(c.data)]));
  for (const c of load.contracts) {
    const f = cache ? cache.schemaFindings(c, validateContractSchema) : validateContractSchema(c);
    const fqn = fqns.get(c);
    findings.push(...f.map((x) => (fqn ? { ...x, fqn } : { ...x })));
    if (f.length === 0) schemaValid.push(c);
  }
  const compiled = compileDomain(schemaValid, load.contracts, { findingsOnly: options.findingsOnly === true });
  findings.push(...compiled.findings);
  sortFindings(findings);
  const byFile = new Map<string, LoadedContract>(load.contracts.map((c) => [c.file, c]));
  // Findings grouped by file in one pass (in their sorted order): a filter per file was quadratic
  // on a large broken domain.
  const findingsOf = new Map<string, Finding[]>();
  for (const f of findings) {
    const list = findingsOf.get(f.file);
    if (list) list.push(f);
    else findingsOf.set(f.file, [f]);
  }
  const contracts: ContractReport[] = load.files.map((file) => {
    const own = findingsOf.get(file) ?? [];
    const c = byFile.get(file);
    return { file, fqn: c ? (fqns.get(c) ?? null) : null, findings: own, ok: !hasErrors(own) };
  });
  const errors = findings.filter((f) => f.severity === "error").length;
  return {
    contracts,
    findings,
    errors,
    warnings: findings.length - errors,
    ir: errors === 0 ? compiled.ir : null,
    summary: errors === 0 ? compiled.summary : null,
    loaded: load.contracts,
  };
}
