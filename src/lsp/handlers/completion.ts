import { fileURLToPath } from "node:url";
import { type CompletionItem, CompletionItemKind, type CompletionList, type CompletionParams } from "vscode-languageserver/node.js";
import type { PathSegments } from "../../compiler/context.js";
import { KINDS, type Kind } from "../../contracts/index.js";
import { asString } from "../../contracts/unchecked.js";
import { completionContext } from "../completion-context.js";
import { schemaKeys, schemaValues } from "../schema-complete.js";
import type { Session } from "../session.js";
import { entityFields, expressionSiteEntity, fieldSiteEntity, referenceSite } from "../symbols.js";
import type { Entry, Workspace } from "../workspace.js";

/** Completion lists are cut here (the client asks again as the user types): a domain has 20,000 FQNs. */
const MAX_ITEMS = 200;

const STDLIB_MIXINS = ["identifiable", "timestamped", "auditable", "taggable", "commentable", "soft_deletable"];

/**
 * Completion at the cursor: on a key, the keys the kind's schema allows there; on a value, the FQNs a
 * reference may name, the fields an expression or a field list may name, or the schema's enum values.
 */
export function completion(session: Session, params: CompletionParams): CompletionItem[] | CompletionList {
  const doc = session.documents.get(params.textDocument.uri);
  const ws = session.ws;
  if (!ws || !doc) return [];
  const text = doc.getText();
  const ctx = completionContext(text, doc.offsetAt(params.position));
  const entry = ws.entries.get(fileURLToPath(params.textDocument.uri));
  const kind = (entry?.kind ?? (/^kind:\s*(\w+)/m.exec(text)?.[1] as Kind | undefined) ?? null) as Kind | null;
  if (ctx.onKey) return keyItems(kind, ctx.path, ctx.siblings);
  return valueItems(ws, entry, kind, ctx.path, ctx.prefix);
}

function keyItems(kind: Kind | null, path: PathSegments, siblings: string[]): CompletionItem[] {
  const items: CompletionItem[] = [];
  const existing = new Set(siblings);
  for (const k of schemaKeys(kind, path)) {
    if (existing.has(k.name)) continue;
    items.push({
      label: k.name,
      kind: CompletionItemKind.Property,
      insertText: `${k.name}: `,
      ...(k.description ? { documentation: k.description } : {}),
      ...(k.required ? { detail: "required" } : {}),
    });
  }
  if (path.length === 0 && !existing.has("kind")) {
    // The envelope's kind decides the spec's schema; offer it even before the schema can.
    for (const k of KINDS) items.push({ label: k, kind: CompletionItemKind.EnumMember, insertText: `kind: ${k}` });
  }
  return items;
}

function valueItems(
  ws: Workspace,
  entry: Entry | undefined,
  kind: Kind | null,
  path: PathSegments,
  prefix: string,
): CompletionItem[] | CompletionList {
  const items: CompletionItem[] = [];
  const expect = referenceSite(kind, path);
  if (expect) {
    for (const e of ws.allEntries()) {
      if (!e.fqn?.startsWith(prefix) || (expect.length > 0 && !expect.includes(e.kind as Kind))) continue;
      items.push({ label: e.fqn, kind: CompletionItemKind.Reference, detail: e.kind ?? "" });
      if (items.length >= MAX_ITEMS) return { isIncomplete: true, items };
    }
    if (expect.includes("Mixin")) {
      for (const m of STDLIB_MIXINS) {
        const fqn = `mixin/stdlib/${m}`;
        if (fqn.startsWith(prefix)) items.push({ label: fqn, kind: CompletionItemKind.Reference, detail: "standard mixin" });
      }
    }
    return items;
  }
  const inExpression = entry ? expressionSiteEntity(ws, entry, path) : null;
  // In an expression the word under the cursor is the last identifier, not the whole value.
  const fieldSite = inExpression ?? (entry ? fieldSiteEntity(ws, entry, path) : null);
  if (fieldSite) {
    const word = inExpression ? (/[A-Za-z_]\w*$/.exec(prefix)?.[0] ?? "") : prefix;
    // A field's definition in a buffer being edited need not pass the schema: its type is read unchecked.
    for (const [name, f] of entityFields(ws, fieldSite)) {
      if (name.startsWith(word)) items.push({ label: name, kind: CompletionItemKind.Field, detail: `${asString(f.def.type)} (${f.from})` });
    }
    return items;
  }
  for (const v of schemaValues(kind, path)) items.push({ label: v, kind: CompletionItemKind.EnumMember });
  return items;
}
