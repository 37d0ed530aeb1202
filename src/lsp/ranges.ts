import { type Diagnostic, DiagnosticSeverity, type Range } from "vscode-languageserver/node.js";
import type { Finding } from "../contracts/index.js";
import type { Occurrence } from "./symbols.js";

/** A finding's place as a range: from its line and column to the end of the token there. */
export function toDiagnostic(f: Finding, text: string): Diagnostic {
  const line = Math.max(f.line - 1, 0);
  const character = Math.max(f.column - 1, 0);
  const lineText = text.split("\n", line + 1)[line] ?? "";
  let end = character;
  if (f.line > 0) {
    const rest = lineText
      .slice(character)
      .replace(/\s+#.*$/, "")
      .trimEnd();
    end = character + rest.length;
  }
  const range: Range = { start: { line, character }, end: { line, character: end } };
  return {
    range,
    severity: f.severity === "error" ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: f.code,
    source: "charter",
    message: f.message,
  };
}

function positionOf(text: string, offset: number): { line: number; character: number } {
  let line = 0;
  let last = -1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    last = i;
  }
  return { line, character: offset - last - 1 };
}

/** The range of a name, quotes excluded. */
export function occurrenceRange(o: Occurrence, text: string): Range {
  const raw = text.slice(o.start, o.end);
  const at = raw.indexOf(o.value);
  const start = at >= 0 ? o.start + at : o.start;
  return { start: positionOf(text, start), end: positionOf(text, at >= 0 ? start + o.value.length : o.end) };
}

export function wholeRange(text: string): Range {
  return { start: { line: 0, character: 0 }, end: positionOf(text, text.length) };
}
