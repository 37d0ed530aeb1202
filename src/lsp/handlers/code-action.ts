import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type CodeAction, CodeActionKind, type CodeActionParams, type TextEdit } from "vscode-languageserver/node.js";
import { classifyError } from "../../healer/intake/classify.js";
import { normaliseContract } from "../../healer/proposal/normalise.js";
import { wholeRange } from "../ranges.js";
import type { Session } from "../session.js";

/** The Healer's tier-1 normalisation as a quick fix, offered where a shown diagnostic is one it fixes. */
export function codeActions(session: Session, params: CodeActionParams): CodeAction[] {
  const ws = session.ws;
  if (!ws) return [];
  const p = fileURLToPath(params.textDocument.uri);
  const findings = session.shown.get(p) ?? [];
  const fixable = params.context.diagnostics.filter((d) => classifyError({ source: "validation", message: d.message }).tier === 1);
  if (fixable.length === 0) return [];
  const domain = ws
    .allEntries()
    .map((e) => e.contract)
    .filter((c) => c !== null);
  const result = normaliseContract(p, domain, findings, ws.root);
  if (result.edits.length === 0) return [];
  const changes: Record<string, TextEdit[]> = {};
  for (const edit of result.edits) {
    const abs = resolve(ws.root, edit.file);
    changes[pathToFileURL(abs).href] = [{ range: wholeRange(session.textOf(abs)), newText: edit.after }];
  }
  return [
    {
      title: `Normalise (Healer tier 1): ${result.summary.join("; ")}`,
      kind: CodeActionKind.QuickFix,
      diagnostics: fixable,
      isPreferred: true,
      edit: { changes },
    },
  ];
}
