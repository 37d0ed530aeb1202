import type { Finding } from "../contracts/findings.js";
import { hasErrors, sortFindings } from "../contracts/findings.js";
import { envelopeFqn } from "../contracts/fqn.js";
import { type LoadedContract, loadContracts } from "../contracts/loader.js";
import { validateContractSchema } from "../contracts/schema.js";
import { compileDomain } from "./compile.js";
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
  /** The compiled IR; null when any error exists. */
  ir: DomainIR | null;
  /** The parsed contracts, for tools (the Healer) that patch them. */
  loaded: LoadedContract[];
}

/** The whole front of the pipeline: load, validate against the schemas, check semantics, compile. */
export function checkDomain(path: string): CheckResult {
  const load = loadContracts(path);
  const findings: Finding[] = [...load.findings];
  const schemaValid: LoadedContract[] = [];
  const fqns = new Map(load.contracts.map((c) => [c, envelopeFqn(c.data)]));
  for (const c of load.contracts) {
    const f = validateContractSchema(c);
    const fqn = fqns.get(c);
    findings.push(...f.map((x) => (fqn ? { ...x, fqn } : x)));
    if (f.length === 0) schemaValid.push(c);
  }
  const compiled = compileDomain(schemaValid, load.contracts);
  findings.push(...compiled.findings);
  sortFindings(findings);
  const byFile = new Map<string, LoadedContract>(load.contracts.map((c) => [c.file, c]));
  const contracts: ContractReport[] = load.files.map((file) => {
    const own = findings.filter((f) => f.file === file);
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
    loaded: load.contracts,
  };
}
