import type { DefinitionParams, Location, ReferenceParams } from "vscode-languageserver/node.js";
import type { Session } from "../session.js";
import { fieldDefinition, fieldOccurrences, fqnDefinition, fqnOccurrences, symbolAt } from "../symbols.js";

/** Where the contract or field under the cursor is defined. */
export function definition(session: Session, params: DefinitionParams): Location | null {
  const at = session.entryAt(params.textDocument.uri);
  if (!at) return null;
  const sym = symbolAt(at.ws, at.entry, at.doc.offsetAt(params.position));
  if (!sym) return null;
  const def = sym.type === "fqn" ? fqnDefinition(at.ws, sym.fqn) : fieldDefinition(at.ws, sym.entity, sym.field);
  return def ? session.location(def) : null;
}

/** Every use of the contract or field under the cursor, and its definition when the client asks. */
export function references(session: Session, params: ReferenceParams): Location[] {
  const at = session.entryAt(params.textDocument.uri);
  if (!at) return [];
  const { ws } = at;
  const sym = symbolAt(ws, at.entry, at.doc.offsetAt(params.position));
  if (!sym) return [];
  const uses = sym.type === "fqn" ? fqnOccurrences(ws, sym.fqn) : fieldOccurrences(ws, sym.entity, sym.field);
  const def = sym.type === "fqn" ? fqnDefinition(ws, sym.fqn) : fieldDefinition(ws, sym.entity, sym.field);
  return [...(params.context.includeDeclaration && def ? [def] : []), ...uses].map((o) => session.location(o));
}
