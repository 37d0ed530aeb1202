import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { compileDomain } from "../compiler/compile.js";
import type { Finding } from "../contracts/findings.js";
import { type LoadedContract, loadContracts, parseContractSource } from "../contracts/loader.js";
import { validateContractSchema } from "../contracts/schema.js";
import type { PlannedContract } from "./convert.js";
import { printContract } from "./print.js";

export interface Rejected {
  contract: PlannedContract;
  findings: Finding[];
}

export interface CheckedPlan {
  accepted: PlannedContract[];
  rejected: Rejected[];
  /** References removed because their target was rejected: `entity.field -> target`. */
  unlinked: string[];
}

/**
 * Runs the planned contracts through the real validator (schemas, then the compiler's semantic
 * checks) together with the contracts already in the domain directory, exactly as `forge validate`
 * would see them once written. A contract with an error is not written: it is rejected with its
 * findings, with its entity's other contracts, and references to a rejected entity are removed
 * from the others (and reported), so what is written always validates.
 */
export function checkPlanned(planned: readonly PlannedContract[], domainDir: string): CheckedPlan {
  const root = resolve(domainDir);
  const plannedFiles = new Set(planned.map((c) => resolve(root, c.file)));
  const existing = existsSync(root) ? loadContracts(root).contracts.filter((c) => !plannedFiles.has(c.absPath)) : [];
  let live = planned.map((c) => ({ ...c, data: structuredClone(c.data) }));
  const rejected: Rejected[] = [];
  const unlinked: string[] = [];
  for (let round = 0; round < 50; round++) {
    const findingsByFile = validate(live, root, existing);
    const bad = live.filter((c) => (findingsByFile.get(c.file) ?? []).some((f) => f.severity === "error"));
    if (bad.length === 0) return { accepted: live, rejected, unlinked };
    const badEntities = new Set(bad.filter((c) => c.kind === "Entity" || c.kind === "Workflow").map((c) => c.entity));
    for (const c of live) {
      if (bad.includes(c)) rejected.push({ contract: c, findings: findingsByFile.get(c.file) ?? [] });
      else if (badEntities.has(c.entity)) rejected.push({ contract: c, findings: [] });
    }
    live = live.filter((c) => !bad.includes(c) && !badEntities.has(c.entity));
    const gone = new Set([...badEntities].map((e) => planned.find((p) => p.kind === "Entity" && p.entity === e)?.fqn));
    for (const c of live) unlinked.push(...stripReferences(c, gone));
  }
  return { accepted: [], rejected: [...rejected, ...live.map((contract) => ({ contract, findings: [] }))], unlinked };
}

/** Validates contracts as one domain and returns the error findings per planned file. */
export function validate(
  contracts: readonly PlannedContract[],
  root: string,
  existing: readonly LoadedContract[] = [],
): Map<string, Finding[]> {
  const out = new Map<string, Finding[]>();
  const loaded: LoadedContract[] = [];
  const fileOf = new Map<string, string>();
  for (const c of contracts) {
    const abs = join(root, c.file);
    const parsed = parseContractSource(printContract(c), abs, c.file);
    fileOf.set(c.file, c.file);
    if (!("contract" in parsed)) {
      out.set(c.file, parsed.findings);
      continue;
    }
    const schema = validateContractSchema(parsed.contract);
    if (schema.length > 0) out.set(c.file, schema);
    else loaded.push(parsed.contract);
  }
  const compiled = compileDomain([...existing, ...loaded]);
  for (const f of compiled.findings) {
    if (f.severity !== "error" || !fileOf.has(f.file)) continue;
    out.set(f.file, [...(out.get(f.file) ?? []), f]);
  }
  return out;
}

function stripReferences(c: PlannedContract, gone: ReadonlySet<string | undefined>): string[] {
  if (c.kind !== "Entity") return [];
  const fields = (c.data.spec as { fields?: Record<string, Record<string, unknown>> }).fields ?? {};
  const out: string[] = [];
  for (const [name, def] of Object.entries(fields)) {
    const ref = def.references as { entity?: string } | undefined;
    if (ref && gone.has(ref.entity)) {
      delete def.references;
      out.push(`${c.name}.${name} -> ${ref.entity}`);
    }
  }
  return out;
}
