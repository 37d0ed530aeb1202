import type { Finding, Severity } from "../contracts/findings.js";
import { toPointer } from "../contracts/findings.js";
import type { Kind } from "../contracts/fqn.js";
import type { LoadedContract } from "../contracts/loader.js";
import { locate } from "../contracts/locate.js";
import { pyRepr } from "../contracts/py-repr.js";

/** A loaded contract whose envelope is known to be well-formed. */
export interface Contract {
  fqn: string;
  kind: Kind;
  name: string;
  domain: string;
  loaded: LoadedContract;
  /** The contract's `spec`, already checked against its kind's schema. */
  spec: Record<string, unknown>;
  meta: Record<string, unknown>;
  requires: string[];
}

export type PathSegments = readonly (string | number)[];

/** Collects semantic findings, each located in the contract's YAML source. */
export class Reporter {
  readonly findings: Finding[] = [];

  report(
    contract: Contract,
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
  notOneOf(contract: Contract, path: PathSegments, value: string, allowed: readonly string[], what: string): void {
    this.report(contract, path, `ref.unknown_${what}`, `${pyRepr(value)} is not one of ${pyRepr([...allowed])}`);
  }

  unresolved(contract: Contract, path: PathSegments, fqn: string): void {
    this.report(contract, path, "ref.unresolved", `unresolved reference ${pyRepr(fqn)}`);
  }
}

export function asRecord(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function asStringArray(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

export function asString(v: unknown, fallback = ""): string {
  return typeof v === "string" ? v : fallback;
}

// Every IR record of a contract starts with fqn, name, domain, file and description, written out
// in each builder's object literal. A shared `identity(c)` object spread first, with a dozen
// properties after it, made V8 build each record the slow way: on 10,000 entities a third of the
// compile went there (allocation five times what the record needs).
