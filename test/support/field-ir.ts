import { presence } from "../../src/compiler/fields.js";
import type { FieldIR } from "../../src/compiler/ir.js";

/** A field as the compiler hands it to the generators: an optional, writable entity field with no
 * constraint, default or reference, unless `extra` says otherwise. */
export function fieldIR(name: string, type: FieldIR["type"], extra: Partial<FieldIR> = {}): FieldIR {
  const field = {
    name,
    type,
    description: "",
    required: false,
    immutable: false,
    hasDefault: false,
    default: null,
    format: null,
    enum: null,
    itemsType: null,
    computed: null,
    constraints: {},
    references: null,
    renamedFrom: null,
    origin: "entity",
    primaryKey: false,
    writable: true,
    updatable: true,
    ...extra,
  };
  // Nullability as the compiler decides it, unless `extra` says otherwise.
  return { ...presence(field), ...field };
}
