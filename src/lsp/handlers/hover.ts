import type { Hover, HoverParams } from "vscode-languageserver/node.js";
import { asRecord, asString } from "../../contracts/unchecked.js";
import { occurrenceRange } from "../ranges.js";
import type { Session } from "../session.js";
import { entityFields, symbolAt } from "../symbols.js";

/** A contract's kind, description and file, or a field's type and rules, as markdown. */
export function hover(session: Session, params: HoverParams): Hover | null {
  const at = session.entryAt(params.textDocument.uri);
  if (!at) return null;
  const { ws } = at;
  const sym = symbolAt(ws, at.entry, at.doc.offsetAt(params.position));
  if (!sym) return null;
  const range = occurrenceRange(sym.occurrence, at.doc.getText());
  if (sym.type === "fqn") {
    const target = ws.entryOfFqn(sym.fqn);
    if (!target?.contract) return { contents: { kind: "markdown", value: `\`${sym.fqn}\`: no such contract` }, range };
    // The target may fail its schema (it is being edited): its data is read unchecked.
    const meta = asRecord(target.contract.data.metadata);
    const lines = [`**${target.kind}** \`${sym.fqn}\``];
    if (asString(meta.description)) lines.push("", asString(meta.description));
    lines.push("", `defined in ${target.contract.file}`);
    return { contents: { kind: "markdown", value: lines.join("\n") }, range };
  }
  const f = entityFields(ws, sym.entity).get(sym.field);
  if (!f) return { contents: { kind: "markdown", value: `\`${sym.field}\`: no such field of \`${sym.entity}\`` }, range };
  const def = f.def;
  const lines = [
    `**field** \`${sym.field}\` of \`${sym.entity}\`: \`${asString(def.type, "?")}\`${def.required === true ? ", required" : ""}`,
  ];
  for (const key of ["enum", "default", "constraints", "references", "computed", "unique"]) {
    if (def[key] !== undefined) lines.push(`- ${key}: \`${JSON.stringify(def[key])}\``);
  }
  if (asString(def.description)) lines.push("", asString(def.description));
  if (f.from !== sym.entity) lines.push("", `from ${f.from}`);
  return { contents: { kind: "markdown", value: lines.join("\n") }, range };
}
