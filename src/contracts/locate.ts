import { type Document, isMap, isPair, isScalar, isSeq, type LineCounter, type Node } from "yaml";

export interface Position {
  line: number;
  column: number;
}

/**
 * Finds the source position of the node at `path` in a parsed YAML document. With `key: true` it
 * points at the mapping key instead of its value (for "unexpected property" findings). When the
 * path goes deeper than the document, the deepest existing node is used, so every finding still
 * points somewhere useful.
 */
export function locate(
  doc: Document,
  lineCounter: LineCounter,
  path: readonly (string | number)[],
  options: { key?: boolean } = {},
): Position {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && keyText(p.key) === String(segment));
      if (!pair) break;
      if (last && options.key) {
        offset = rangeStart(pair.key) ?? offset;
        node = pair.key;
        break;
      }
      node = pair.value;
      offset = rangeStart(node) ?? rangeStart(pair.key) ?? offset;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)];
      if (item === undefined) break;
      node = item;
      offset = rangeStart(node) ?? offset;
    } else {
      break;
    }
  }
  const pos = lineCounter.linePos(offset);
  return { line: pos.line, column: pos.col };
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}

function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}
