import type { Finding, Severity } from "../contracts/findings.js";
import { toPointer } from "../contracts/findings.js";
import type { Kind } from "../contracts/fqn.js";
import type { LoadedContract } from "../contracts/loader.js";
import { locate } from "../contracts/locate.js";
import { pyRepr } from "../contracts/py-repr.js";
import type { ContractMetadata, SpecOfKind } from "../contracts/spec-types.generated.js";

/**
 * A loaded contract whose envelope is well-formed: enough to index it by FQN and to report on it,
 * whether or not its spec passed the schema.
 */
export interface ContractEnvelope {
  fqn: string;
  kind: Kind;
  name: string;
  domain: string;
  loaded: LoadedContract;
}

/**
 * A contract that passed its schema, discriminated by kind: `spec` has the type generated from
 * that kind's schema, so the builders read typed fields (`Contract<"Route">` is a Route).
 */
export type Contract<K extends Kind = Kind> = {
  [k in K]: ContractEnvelope & {
    kind: k;
    spec: SpecOfKind[k];
    meta: ContractMetadata;
    requires: string[];
  };
}[K];

export type PathSegments = readonly (string | number)[];

/** Collects semantic findings, each located in the contract's YAML source. */
export class Reporter {
  readonly findings: Finding[] = [];

  report(
    contract: ContractEnvelope,
    path: PathSegments,
    code: string,
    message: string,
    options: { key?: boolean; severity?: Severity } = {},
  ): void {
    const pos = locate(contract.loaded.doc, contract.loaded.lineCounter, path, { key: options.key ?? false });
    this.findings.push({
      code,
      message,
      file: contract.loaded.file,
      line: pos.line,
      column: pos.column,
      path: toPointer(path),
      schemaPath: "",
      severity: options.severity ?? "error",
      fqn: contract.fqn,
    });
  }

  /** `'x' is not one of ['a', 'b']`: the membership wording the Healer classifies as invalid_enum. */
  notOneOf(contract: ContractEnvelope, path: PathSegments, value: string, allowed: readonly string[], what: string): void {
    this.report(contract, path, `ref.unknown_${what}`, `${pyRepr(value)} is not one of ${pyRepr([...allowed])}`);
  }

  unresolved(contract: ContractEnvelope, path: PathSegments, fqn: string): void {
    this.report(contract, path, "ref.unresolved", `unresolved reference ${pyRepr(fqn)}`);
  }
}

// Every IR record of a contract starts with fqn, name, domain, file (ContractPlaceIR in ir.ts) and
// most with description (ContractHeaderIR), written out in each builder's object literal on
// purpose. A shared header object spread first, with a dozen properties after it, makes V8 build
// each record the slow way, and every generator then reads the IR through those slow records: the
// spread was tried twice, and each time the compile of 10,000 entities took about twice as long.
