import { Document, isScalar, isSeq, visit } from "yaml";
import type { PlannedContract } from "./convert.js";

/**
 * Contract text: key order as built (envelope, then spec), block style with short scalar lists
 * inline (`enum: [low, high]`), no line folding, and a comment naming where it came from. Same
 * input, same bytes.
 */
export function printContract(c: PlannedContract): string {
  const doc = new Document(c.data, { aliasDuplicateObjects: false });
  visit(doc, {
    Seq(_, node) {
      if (
        isSeq(node) &&
        node.items.length > 0 &&
        node.items.every((i) => isScalar(i) && String(i.value).length < 40) &&
        node.items.length <= 12
      ) {
        node.flow = true;
      }
    },
  });
  const header: string[] = [];
  if (c.source)
    header.push(
      `# Imported from ${c.source.file}${c.source.line !== undefined ? `:${c.source.line}` : ""}${c.source.pointer !== undefined ? ` #${c.source.pointer}` : ""}`,
    );
  if (c.fromLlm && c.fromLlm.length > 0) header.push(`# Suggested by an LLM, review: ${c.fromLlm.join(", ")}`);
  return `${header.map((l) => `${l}\n`).join("")}${doc.toString({ lineWidth: 0, indent: 2, flowCollectionPadding: false })}`;
}
