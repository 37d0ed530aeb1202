import { isMap, isPair, isScalar, isSeq, type Node, type Scalar } from "yaml";
import type { PathSegments } from "../compiler/context.js";
import { expressionNames, type Kind, parseExpression, STDLIB_MIXINS, SYSTEM_FIELDS } from "../contracts/index.js";
import { asRecord, asString, asStringArray } from "../contracts/unchecked.js";
import type { Entry, Workspace } from "./workspace.js";

// The contracts read here are an editor's buffers, which need not pass the schema while they are
// edited (completion runs on a half-typed value), so their data is read as unchecked JSON
// (contracts/unchecked.ts) rather than through the generated spec types the compiler uses.

/** A name in a contract's text: an FQN or a field name, with its offsets in the source. */
export interface Occurrence {
  entry: Entry;
  path: PathSegments;
  start: number;
  end: number;
  /** The text of the name, without quotes. */
  value: string;
}

export type SymbolAt =
  | { type: "fqn"; fqn: string; occurrence: Occurrence }
  | { type: "field"; entity: string; field: string; occurrence: Occurrence };

/** The scalar at `offset` in a contract, with its path: walks the parsed document. */
export function scalarAt(e: Entry, offset: number): { path: (string | number)[]; node: Scalar; isKey: boolean } | null {
  if (!e.contract) return null;
  const path: (string | number)[] = [];
  const within = (n: unknown): boolean => {
    const r = (n as Node | null)?.range;
    return !!r && offset >= r[0] && offset <= r[1];
  };
  let node: unknown = e.contract.doc.contents;
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && (within(p.key) || within(p.value)));
      if (!pair) return null;
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (within(pair.key) && isScalar(pair.key)) return { path: [...path, key], node: pair.key, isKey: true };
      path.push(key);
      node = pair.value;
    } else if (isSeq(node)) {
      const i = node.items.findIndex((it) => within(it));
      if (i < 0) return null;
      path.push(i);
      node = node.items[i];
    } else if (isScalar(node) && within(node)) {
      return { path, node, isKey: false };
    } else {
      return null;
    }
  }
}

function occurrence(entry: Entry, path: PathSegments, node: Scalar, value: string): Occurrence {
  const r = node.range as [number, number, number];
  return { entry, path, start: r[0], end: r[1], value };
}

/** The FQN or field named at `offset`, if any. */
export function symbolAt(ws: Workspace, e: Entry, offset: number): SymbolAt | null {
  const hit = scalarAt(e, offset);
  if (!hit || !e.contract) return null;
  const value = String(hit.node.value);
  const occ = occurrence(e, hit.path, hit.node, value);
  if (!hit.isKey) {
    if (e.refs.some((r) => samePath(r.path, hit.path))) return { type: "fqn", fqn: value, occurrence: occ };
    if (e.fqn && samePath(hit.path, ["metadata", "name"])) return { type: "fqn", fqn: e.fqn, occurrence: occ };
    const entity = fieldSiteEntity(ws, e, hit.path);
    if (entity) return { type: "field", entity, field: value, occurrence: occ };
    const inExpression = expressionSiteEntity(ws, e, hit.path);
    if (inExpression) {
      const name = namesIn(e, hit.path, hit.node).find((n) => offset >= n.start && offset <= n.end);
      if (name) return { type: "field", entity: inExpression, field: name.value, occurrence: name };
    }
    return null;
  }
  const p = hit.path;
  if ((e.kind === "Entity" || e.kind === "Mixin") && p.length === 3 && p[0] === "spec" && p[1] === "fields" && e.fqn) {
    return { type: "field", entity: e.fqn, field: value, occurrence: occ };
  }
  return null;
}

/**
 * When `path` in contract `e` is a place that names a field, the FQN of the entity whose field it
 * names: a reference's display, a page's columns and filters, a route's request fields, a
 * workflow guard's required fields (the workflow's first entity).
 */
export function fieldSiteEntity(ws: Workspace, e: Entry, path: PathSegments): string | null {
  if (!e.contract) return null;
  const spec = asRecord(e.contract.data.spec);
  const p = path;
  if (p[0] !== "spec") return null;
  if (e.kind === "Entity" || e.kind === "Mixin") {
    if (p.length === 5 && p[1] === "fields" && p[3] === "references" && p[4] === "display") {
      return asString(asRecord(asRecord(asRecord(spec.fields)[String(p[2])]).references).entity) || null;
    }
    return null;
  }
  if (e.kind === "Page") {
    const entity = asString(spec.entity) || null;
    if (p.length === 5 && p[1] === "views" && (p[3] === "columns" || p[3] === "card_fields")) return entity;
    if (p.length === 3 && p[1] === "filters") return entity;
    return null;
  }
  if (e.kind === "Route") {
    const entity = asString(spec.entity) || null;
    if (p.length === 6 && p[1] === "endpoints" && (p[4] === "required_fields" || p[4] === "optional_fields")) return entity;
    return null;
  }
  if (e.kind === "Workflow" && e.fqn) {
    if (p.length === 4 && p[1] === "guards" && p[3] === "require_fields") return null;
    if (p.length === 5 && p[1] === "guards" && p[3] === "require_fields") {
      return ws.dependentsOf(e.fqn).find((d) => d.kind === "Entity")?.fqn ?? null;
    }
  }
  return null;
}

/**
 * When `path` holds an expression over an entity's fields (a workflow guard's condition, a route's
 * validation rule), the FQN of that entity.
 */
export function expressionSiteEntity(ws: Workspace, e: Entry, path: PathSegments): string | null {
  if (!e.contract || !e.fqn) return null;
  const p = path;
  if (e.kind === "Workflow" && p.length === 4 && p[0] === "spec" && p[1] === "guards" && p[3] === "condition") {
    return ws.dependentsOf(e.fqn).find((d) => d.kind === "Entity")?.fqn ?? null;
  }
  if (e.kind === "Route" && p.length === 6 && p[0] === "spec" && p[1] === "endpoints" && p[3] === "validation" && p[5] === "rule") {
    return asString(asRecord(e.contract.data.spec).entity) || null;
  }
  return null;
}

/**
 * The names an expression scalar uses, each with its offsets in the source: the parser says which
 * names the expression has; the source is scanned for them outside its string literals.
 */
function namesIn(e: Entry, path: PathSegments, node: Scalar): Occurrence[] {
  let names: string[];
  try {
    names = expressionNames(parseExpression(String(node.value)));
  } catch {
    return [];
  }
  const [from, to] = node.range as [number, number, number];
  const raw = (e.contract as NonNullable<Entry["contract"]>).source.slice(from, to);
  const out: Occurrence[] = [];
  let quote = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c === "'") quote = !quote;
    if (quote || !/[A-Za-z_]/.test(c) || (i > 0 && /[\w.]/.test(raw[i - 1] as string))) continue;
    const word = /^[A-Za-z_]\w*/.exec(raw.slice(i))?.[0] ?? "";
    if (names.includes(word)) out.push({ entry: e, path, start: from + i, end: from + i + word.length, value: word });
    i += word.length - 1;
  }
  return out;
}

/** The fields an entity has: its own, its mixins' (user and standard) and the system fields. */
export function entityFields(ws: Workspace, fqn: string): Map<string, { def: Readonly<Record<string, unknown>>; from: string }> {
  const out = new Map<string, { def: Readonly<Record<string, unknown>>; from: string }>();
  const e = ws.entryOfFqn(fqn);
  if (!e?.contract) return out;
  const spec = asRecord(e.contract.data.spec);
  // The standard fields are typed; a copy reads them like the unchecked ones of the buffers.
  for (const [name, def] of Object.entries(SYSTEM_FIELDS)) out.set(name, { def: { ...def }, from: "system" });
  for (const m of asStringArray(spec.mixins)) {
    const std = STDLIB_MIXINS[m];
    if (std) for (const [name, def] of Object.entries(std)) out.set(name, { def: { ...def }, from: m });
    const user = ws.entryOfFqn(m);
    if (user?.contract) {
      for (const [name, def] of Object.entries(asRecord(asRecord(user.contract.data.spec).fields)))
        out.set(name, { def: asRecord(def), from: m });
    }
  }
  for (const [name, def] of Object.entries(asRecord(spec.fields))) out.set(name, { def: asRecord(def), from: fqn });
  return out;
}

/** Every place in the domain that names `fqn`: references, and the contract's own name. */
export function fqnOccurrences(ws: Workspace, fqn: string): Occurrence[] {
  const out: Occurrence[] = [];
  for (const d of ws.dependentsOf(fqn)) {
    for (const r of d.refs) {
      if (r.to !== fqn) continue;
      const node = ws.nodeAt(d, r.path);
      if (node && isScalar(node)) out.push(occurrence(d, r.path, node, fqn));
    }
  }
  return out;
}

/** Where a contract is defined: its `metadata.name`. */
export function fqnDefinition(ws: Workspace, fqn: string): Occurrence | null {
  const e = ws.entryOfFqn(fqn);
  if (!e) return null;
  const node = ws.nodeAt(e, ["metadata", "name"]);
  return node && isScalar(node) ? occurrence(e, ["metadata", "name"], node, String(node.value)) : null;
}

/** The key defining field `field` of `entity` (in the entity, or in the mixin that brings it). */
export function fieldDefinition(ws: Workspace, entity: string, field: string): Occurrence | null {
  const from = entityFields(ws, entity).get(field)?.from ?? entity;
  const e = ws.entryOfFqn(from);
  if (!e?.contract) return null;
  const fields = e.contract.doc.getIn(["spec", "fields"], true);
  if (!isMap(fields)) return null;
  const pair = fields.items.find((p) => isScalar(p.key) && String(p.key.value) === field);
  return pair && isScalar(pair.key) ? occurrence(e, ["spec", "fields", field], pair.key, field) : null;
}

/** Every use of a field of `entity` across the contracts that can name it. */
export function fieldOccurrences(ws: Workspace, entity: string, field: string): Occurrence[] {
  const out: Occurrence[] = [];
  const candidates = new Set<Entry>(ws.dependentsOf(entity));
  const target = ws.entryOfFqn(entity);
  for (const r of target?.refs ?? []) {
    const w = ws.entryOfFqn(r.to);
    if (w?.kind === "Workflow") candidates.add(w);
  }
  for (const d of candidates) {
    if (!d.contract) continue;
    for (const { path, node } of scalars(d)) {
      if (String(node.value) === field && fieldSiteEntity(ws, d, path) === entity) out.push(occurrence(d, path, node, field));
      else if (expressionSiteEntity(ws, d, path) === entity) out.push(...namesIn(d, path, node).filter((n) => n.value === field));
    }
  }
  return out;
}

/** Every scalar value of a contract with its path. */
function* scalars(e: Entry): Generator<{ path: (string | number)[]; node: Scalar }> {
  if (!e.contract) return;
  const stack: { node: unknown; path: (string | number)[] }[] = [{ node: e.contract.doc.contents, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop() as { node: unknown; path: (string | number)[] };
    if (isMap(node)) {
      for (const p of node.items) if (isScalar(p.key)) stack.push({ node: p.value, path: [...path, String(p.key.value)] });
    } else if (isSeq(node)) {
      node.items.forEach((it, i) => stack.push({ node: it, path: [...path, i] }));
    } else if (isScalar(node)) {
      yield { path, node };
    }
  }
}

export function samePath(a: PathSegments, b: PathSegments): boolean {
  return a.length === b.length && a.every((s, i) => String(s) === String(b[i]));
}

/** Kinds a reference at `path` of a `kind` contract expects, or null when `path` holds no reference. */
export function referenceSite(kind: Kind | null, path: PathSegments): Kind[] | null {
  const p = path.map(String);
  const is = (...want: string[]): boolean => want.length === p.length && want.every((w, i) => w === "*" || w === p[i]);
  if (p[0] === "requires") return [];
  if (kind === "Entity") {
    if (is("spec", "mixins") || is("spec", "mixins", "*")) return ["Mixin"];
    if (is("spec", "state_machine")) return ["Workflow"];
    if (is("spec", "ai_integration", "*") || is("spec", "ai_integration", "*", "*")) return ["Agent"];
  }
  if ((kind === "Entity" || kind === "Mixin") && is("spec", "fields", "*", "references", "entity")) return ["Entity"];
  if ((kind === "Route" || kind === "Page") && is("spec", "entity")) return ["Entity"];
  if (kind === "Agent" && is("spec", "input", "entity")) return ["Entity"];
  if (kind === "Route" && is("spec", "endpoints", "*", "side_effects", "*", "invoke")) return ["Agent", "Workflow"];
  return null;
}
