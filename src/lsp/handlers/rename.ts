import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { type RenameParams, ResponseError, type TextEdit, type WorkspaceEdit } from "vscode-languageserver/node.js";
import { CONTRACT_SUFFIX, FQN_PATTERN, formatFqn, NAME_PATTERN, parseFqn } from "../../contracts/index.js";
import { occurrenceRange } from "../ranges.js";
import type { Session } from "../session.js";
import { entityFields, fieldDefinition, fieldOccurrences, fqnDefinition, fqnOccurrences, type Occurrence, symbolAt } from "../symbols.js";
import type { Workspace } from "../workspace.js";

/** Renames the contract or field under the cursor everywhere it is used; a refused name is an error the editor shows. */
export function rename(session: Session, params: RenameParams): WorkspaceEdit | null {
  const at = session.entryAt(params.textDocument.uri);
  if (!at) return null;
  const sym = symbolAt(at.ws, at.entry, at.doc.offsetAt(params.position));
  if (!sym) throw new ResponseError(0, "nothing to rename here: put the cursor on a contract's FQN or name, or on a field");
  const textOf = (p: string): string => session.textOf(p);
  return sym.type === "fqn"
    ? renameContract(at.ws, sym.fqn, params.newName, textOf)
    : renameField(at.ws, sym.entity, sym.field, params.newName, textOf);
}

/** A workspace edit renaming a contract (its name, every reference to it, and its file). */
function renameContract(ws: Workspace, fqn: string, newName: string, textOf: (p: string) => string): WorkspaceEdit {
  const parts = parseFqn(fqn);
  if (!parts) throw new ResponseError(0, `${fqn} is not an FQN`);
  const wanted = newName.includes("/") ? newName : formatFqn(parts.kind, parts.domain, newName);
  const next = parseFqn(wanted);
  if (!next || !new RegExp(FQN_PATTERN).test(wanted))
    throw new ResponseError(0, `${JSON.stringify(newName)} is not a valid name: names match ${NAME_PATTERN}`);
  if (next.kind !== parts.kind) throw new ResponseError(0, `a rename keeps the kind: ${wanted} is not a ${parts.kind}`);
  if (wanted === fqn) return { changes: {} };
  const clash = ws.entryOfFqn(wanted);
  if (clash)
    throw new ResponseError(0, `cannot rename ${fqn} to ${wanted}: ${wanted} already exists in ${clash.contract?.file ?? clash.absPath}`);
  const def = ws.entryOfFqn(fqn);
  if (!def?.contract) throw new ResponseError(0, `no contract ${fqn} in the workspace`);
  const edits = new Map<string, TextEdit[]>();
  const add = (o: Occurrence, newText: string): void => {
    const list = edits.get(o.entry.absPath) ?? [];
    list.push({ range: occurrenceRange(o, textOf(o.entry.absPath)), newText });
    edits.set(o.entry.absPath, list);
  };
  const nameOcc = fqnDefinition(ws, fqn);
  if (nameOcc) add(nameOcc, next.name);
  if (next.domain !== parts.domain) {
    const node = ws.nodeAt(def, ["metadata", "domain"]);
    const r = node?.range;
    if (r) add({ entry: def, path: ["metadata", "domain"], start: r[0], end: r[1], value: parts.domain }, next.domain);
  }
  for (const o of fqnOccurrences(ws, fqn)) add(o, wanted);
  const documentChanges: WorkspaceEdit["documentChanges"] = [...edits].map(([p, list]) => ({
    textDocument: { uri: pathToFileURL(p).href, version: null },
    edits: list,
  }));
  // The file follows the contract's name when it was named after it.
  if (basename(def.absPath) === `${parts.name}${CONTRACT_SUFFIX}` && next.name !== parts.name) {
    const target = join(dirname(def.absPath), `${next.name}${CONTRACT_SUFFIX}`);
    if (ws.entries.has(target)) throw new ResponseError(0, `cannot rename ${fqn}: file ${target} already exists`);
    documentChanges.push({ kind: "rename", oldUri: pathToFileURL(def.absPath).href, newUri: pathToFileURL(target).href });
  }
  return { documentChanges };
}

/** A workspace edit renaming a field of an entity (or of the mixin that brings it) and its uses. */
function renameField(ws: Workspace, entity: string, field: string, newName: string, textOf: (p: string) => string): WorkspaceEdit {
  if (!new RegExp(NAME_PATTERN).test(newName))
    throw new ResponseError(0, `${JSON.stringify(newName)} is not a valid field name: names match ${NAME_PATTERN}`);
  if (newName === field) return { changes: {} };
  const fields = entityFields(ws, entity);
  if (fields.has(newName)) throw new ResponseError(0, `cannot rename ${field} to ${newName}: ${entity} already has a field ${newName}`);
  const def = fieldDefinition(ws, entity, field);
  if (!def) throw new ResponseError(0, `${entity} defines no field ${field} that can be renamed`);
  const changes: Record<string, TextEdit[]> = {};
  for (const o of [def, ...fieldOccurrences(ws, entity, field)]) {
    const uri = pathToFileURL(o.entry.absPath).href;
    const list = changes[uri] ?? [];
    if (!list.some((e) => JSON.stringify(e.range) === JSON.stringify(occurrenceRange(o, textOf(o.entry.absPath))))) {
      list.push({ range: occurrenceRange(o, textOf(o.entry.absPath)), newText: newName });
    }
    changes[uri] = list;
  }
  return { changes };
}
