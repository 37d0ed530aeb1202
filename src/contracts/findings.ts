import { compareText } from "../shared/text.js";

/**
 * Findings are data, never exceptions: every stage collects all of them so that a user (or the
 * Healer) sees every problem of a domain in one run. The `message` keeps the classic JSON Schema
 * wording because the Healer classifies findings by matching on it.
 */
export type Severity = "error" | "warning";

export interface Finding {
  /** Stable machine code, e.g. `schema.pattern`, `ref.unresolved`, `yaml.syntax`. */
  code: string;
  message: string;
  /** Path of the contract file, as given to the loader (relative paths stay relative). */
  file: string;
  /** 1-based line and column of the offending node; 0 when the finding concerns the whole file. */
  line: number;
  column: number;
  /** JSON Pointer into the contract document, `""` for the document itself. */
  path: string;
  /** JSON Pointer into the schema that failed, `""` for checks that are not schema keywords. */
  schemaPath: string;
  severity: Severity;
  /** FQN of the contract the finding belongs to, when it is known. */
  fqn?: string;
}

export function hasErrors(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.severity === "error");
}

/** Orders findings by file, position, then message, so that output is stable. */
export function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort(
    (a, b) => compareText(a.file, b.file) || a.line - b.line || a.column - b.column || compareText(a.message, b.message),
  );
}

/** One finding as `file:line:col: severity: message [code]`; `label` may style the severity. */
export function formatFinding(f: Finding, label: (severity: Severity) => string = (s) => s): string {
  const where = f.line > 0 ? `${f.file}:${f.line}:${f.column}` : f.file;
  return `${where}: ${label(f.severity)}: ${f.message} [${f.code}]`;
}

/** Encodes path segments as a JSON Pointer (RFC 6901). */
export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

export function fromPointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}
