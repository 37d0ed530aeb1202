import { applyPatch, structuredPatch } from "diff";
import { type Document, isMap, isPair, isScalar, isSeq, parseDocument, Scalar } from "yaml";

/**
 * Editing a contract through its YAML Document (not a re-dump of plain JSON) keeps comments, key
 * order, flow style and quoting. These options make `toString` reproduce the hand-written files of
 * the examples byte for byte (no line folding, `[a, b]` without padding).
 */
const RENDER = { lineWidth: 0, flowCollectionPadding: false } as const;

export function parseEditable(source: string): Document {
  return parseDocument(source, { keepSourceTokens: false, uniqueKeys: true });
}

/**
 * Renders an edited document while keeping every byte of the source that the edit did not touch.
 * The YAML library may reformat what it did not change (odd indentation, spacing in flow
 * collections); so the edit is taken as the line diff between the rendering of the untouched
 * document and that of the edited one, and that diff is applied to the original text.
 */
export function renderEdited(source: string, edited: Document): string {
  const after = edited.toString(RENDER);
  const base = parseEditable(source).toString(RENDER);
  if (base === source) return after;
  const patched = applyPatch(source, structuredPatch("a", "b", base, after, undefined, undefined, { context: 0 }));
  return patched === false ? after : patched;
}

export type Segment = string | number;

/** A scalar value in the document, with its JSON Pointer segments and the key it sits under. */
export interface ScalarVisit {
  node: Scalar;
  path: Segment[];
  /** The mapping key this scalar is the value of (or the nearest one above a sequence item). */
  parentKey: string | null;
}

/** A mapping key, with the path of the mapping that holds it. */
export interface KeyVisit {
  key: Scalar;
  mapPath: Segment[];
}

/** Walks every scalar value and every mapping key of the document, depth first, in order. */
export function walkDocument(doc: Document, onScalar: (v: ScalarVisit) => void, onKey?: (k: KeyVisit) => void): void {
  const walk = (node: unknown, path: Segment[], parentKey: string | null): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const keyNode = pair.key;
        const keyText = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
        if (onKey && isScalar(keyNode)) onKey({ key: keyNode, mapPath: path });
        walk(pair.value, [...path, keyText], keyText);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, [...path, i], parentKey));
    } else if (isScalar(node)) {
      onScalar({ node, path, parentKey });
    }
  };
  walk(doc.contents, [], null);
}

/** Replaces the value at `path` (a string scalar) keeping the node, its comment and its quoting. */
export function setValue(doc: Document, path: readonly Segment[], value: string): void {
  const node = doc.getIn(path, true);
  if (isScalar(node)) {
    node.value = value;
    return;
  }
  doc.setIn(path, value);
}

/**
 * Renames the key `from` of the mapping at `mapPath` in place (same position, same comments).
 * Returns false when the mapping has no such key or already has the new one.
 */
export function renameKey(doc: Document, mapPath: readonly Segment[], from: string, to: string): boolean {
  const map = mapPath.length === 0 ? doc.contents : doc.getIn(mapPath, true);
  if (!isMap(map)) return false;
  const keyOf = (p: unknown): string | undefined => (isPair(p) ? (isScalar(p.key) ? String(p.key.value) : String(p.key)) : undefined);
  if (map.items.some((p) => keyOf(p) === to)) return false;
  const pair = map.items.find((p) => keyOf(p) === from);
  if (!pair) return false;
  if (isScalar(pair.key)) pair.key.value = to;
  else pair.key = new Scalar(to);
  return true;
}
