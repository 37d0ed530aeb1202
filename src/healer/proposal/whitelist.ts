import { isMap, isPair, isScalar } from "yaml";
import { CONSTRAINT_KEYS, FIELD_PROPERTIES } from "../../contracts/field-keys.js";
import { parseEditable, renderEdited } from "./yaml-edit.js";

const FIELD_SET = new Set<string>(FIELD_PROPERTIES);
const CONSTRAINT_SET = new Set<string>(CONSTRAINT_KEYS);

/**
 * Removes field properties and constraint keys outside the whitelists from the fields of an
 * Entity or Mixin contract (silently, before validation). Models like to
 * invent `required_when` or `unique`; dropping them keeps the rest of a good proposal. Works on
 * the YAML document so comments and layout survive. Returns the text unchanged when nothing is
 * removed, and the pointers of what was removed (for logs and tests, never for the user).
 */
export function stripUnknownFieldKeys(source: string): { text: string; removed: string[] } {
  let doc: ReturnType<typeof parseEditable>;
  try {
    doc = parseEditable(source);
  } catch {
    return { text: source, removed: [] };
  }
  if (doc.errors.length > 0) return { text: source, removed: [] };
  const kind = doc.get("kind");
  if (kind !== "Entity" && kind !== "Mixin") return { text: source, removed: [] };
  const fields = doc.getIn(["spec", "fields"], true);
  if (!isMap(fields)) return { text: source, removed: [] };
  const removed: string[] = [];
  const keyOf = (p: unknown): string => (isPair(p) && isScalar(p.key) ? String(p.key.value) : "");
  for (const pair of fields.items) {
    if (!isPair(pair) || !isMap(pair.value)) continue;
    const field = keyOf(pair);
    const def = pair.value;
    def.items = def.items.filter((p) => {
      const key = keyOf(p);
      if (FIELD_SET.has(key)) return true;
      removed.push(`/spec/fields/${field}/${key}`);
      return false;
    });
    const constraints = def.get("constraints", true);
    if (isMap(constraints)) {
      constraints.items = constraints.items.filter((p) => {
        const key = keyOf(p);
        if (CONSTRAINT_SET.has(key)) return true;
        removed.push(`/spec/fields/${field}/constraints/${key}`);
        return false;
      });
    }
  }
  if (removed.length === 0) return { text: source, removed };
  return { text: renderEdited(source, doc), removed };
}
