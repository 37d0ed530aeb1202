import { relative, resolve, sep } from "node:path";
import type { Document } from "yaml";
import type { Finding, LoadedContract } from "../../contracts/index.js";
import { FQN_PATTERN, formatFqn, fromPointer, KINDS, type Kind, toPointer } from "../../contracts/index.js";
import { classifyError } from "../intake/classify.js";
import type { Change, FileEdit } from "../types.js";
import { parseEditable, renameKey, renderEdited, type Segment, setValue, walkDocument } from "./yaml-edit.js";

/**
 * Tier 1: the deterministic normaliser, applied without review. It repairs every tier-1 finding
 * of one contract (snake_case names, SCREAMING_SNAKE graph edges, a valid number prefix, FQNs in
 * lower snake case) and carries each rename through the domain: references to a renamed contract,
 * uses of a renamed field or state, so the domain still resolves afterwards. Pure: it reads the
 * loaded contracts and returns file edits; applying them is apply.ts's job.
 */

/** `TicketItem`, `ticket-item`, `Ticket Item` -> `ticket_item`; always starts with a letter. */
export function snakeCase(text: string): string {
  const out = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toLowerCase()
    .replace(/_+/g, "_")
    .replace(/^_|_$/g, "");
  if (out === "") return "unnamed";
  return /^[a-z]/.test(out) ? out : `n_${out}`;
}

/** `assignedTo`, `assigned-to` -> `ASSIGNED_TO`. */
export function screamingSnakeCase(text: string): string {
  return snakeCase(text).toUpperCase();
}

/** Two to six upper-case letters: the letters of the value, else those of the contract name. */
export function numberPrefixOf(value: string, contractName: string): string {
  const letters = (s: string): string =>
    s
      .normalize("NFKD")
      .replace(/[^A-Za-z]/g, "")
      .toUpperCase();
  let p = letters(value);
  if (p.length < 2) p = letters(contractName).slice(0, 3);
  if (p.length < 2) p = `${p}XX`.slice(0, 2);
  return p.slice(0, 6);
}

const fqnRe = new RegExp(FQN_PATTERN);
const KIND_BY_LOWER = new Map<string, Kind>(KINDS.map((k) => [k.toLowerCase(), k]));

/** `Entity/Help Desk/TicketItem` -> `entity/help_desk/ticket_item`; null when it is no FQN at all. */
export function normaliseFqn(value: string): string | null {
  const parts = value.split("/").map((p) => p.trim());
  if (parts.length !== 3) return null;
  const kind = KIND_BY_LOWER.get((parts[0] as string).toLowerCase());
  if (!kind || !parts[1] || !parts[2]) return null;
  return formatFqn(kind, snakeCase(parts[1]), snakeCase(parts[2]));
}

/** Mapping keys whose values are human text: a rename never touches them. */
const PROSE_KEYS = new Set(["description", "title", "label", "summary", "message", "explanation", "approach", "icon", "color", "error"]);

interface Working {
  loaded: LoadedContract;
  doc: Document;
  changes: Change[];
}

export interface NormaliseResult {
  /** The target's edit first, then every other contract the renames reached; only files that change. */
  edits: FileEdit[];
  /** One line per change, for the proposal's explanation. */
  summary: string[];
  /** Tier-1 findings the normaliser could not repair (a rename that would collide, say). */
  unresolved: string[];
}

/**
 * Normalises the contract at `targetAbsPath`. `findings` are the current findings of the domain;
 * only the target's tier-1 ones drive the edits. `projectRoot` makes file names in the result
 * project-relative.
 */
export function normaliseContract(
  targetAbsPath: string,
  domain: readonly LoadedContract[],
  findings: readonly Finding[],
  projectRoot: string,
): NormaliseResult {
  const target = domain.find((c) => c.absPath === targetAbsPath);
  if (!target) return { edits: [], summary: [], unresolved: [`contract file ${targetAbsPath} could not be loaded`] };
  const run = new NormaliseRun(domain);
  const t = run.open(target);
  for (const f of findings) {
    if (resolve(f.file) === targetAbsPath && f.severity === "error") fixFinding(run, t, f);
  }
  spreadRenames(run, t);
  return { edits: collectEdits(run, t, projectRoot), summary: run.summary, unresolved: run.unresolved };
}

/**
 * One normalisation: the contracts opened for editing (each parsed once, whoever reaches it
 * first), what was done and not done, and the renames the target's fixes spread to the domain.
 */
class NormaliseRun {
  readonly work = new Map<string, Working>();
  readonly summary: string[] = [];
  readonly unresolved: string[] = [];
  readonly contractRenames: { from: string; to: string }[] = [];
  readonly identifierRenames: { from: string; to: string; scope: "contract" | "domain"; keys: boolean }[] = [];

  constructor(readonly domain: readonly LoadedContract[]) {}

  open(c: LoadedContract): Working {
    let w = this.work.get(c.absPath);
    if (!w) {
      w = { loaded: c, doc: parseEditable(c.source), changes: [] };
      this.work.set(c.absPath, w);
    }
    return w;
  }
}

/** One error finding of the target: a value fixed in place, a key renamed, or noted as unresolved. */
function fixFinding(run: NormaliseRun, t: Working, f: Finding): void {
  const c = classifyError({ source: "validation", message: f.message });
  if (c.tier !== 1) return;
  const segments = fromPointer(f.path);
  const value = valueAt(t.loaded.data, segments);
  if (typeof value === "string") {
    fixStringValue(run, t, f, c.errorType, segments, value);
    return;
  }
  // A key that breaks a propertyNames pattern: the finding's path ends at that key.
  const key = segments[segments.length - 1];
  if (c.errorType === "naming" && key !== undefined && key === firstQuoted(f.message)) {
    renameOffendingKey(run, t, f, segments, key);
    return;
  }
  run.unresolved.push(f.message);
}

function fixStringValue(run: NormaliseRun, t: Working, f: Finding, errorType: string, segments: string[], value: string): void {
  const target = t.loaded;
  const fixed = fixValue(errorType, value, target);
  if (fixed === null || fixed === value) {
    run.unresolved.push(f.message);
    return;
  }
  const before = fqnOfData(target.data);
  setValue(t.doc, segments, fixed);
  t.changes.push({ op: "replace", path: f.path, value: fixed, before: value, reason: errorType });
  run.summary.push(`${f.path}: ${JSON.stringify(value)} -> ${JSON.stringify(fixed)} (${errorType})`);
  if (f.path === "/metadata/name" || f.path === "/metadata/domain") {
    const after = fqnOfDoc(t.doc);
    if (before && after && before !== after) run.contractRenames.push({ from: before, to: after });
  } else if (errorType === "fqn_format") {
    // The reference points at a contract whose own name is not normalised yet: rename it too,
    // so the reference resolves once both are fixed.
    const named = run.domain.find((d) => fqnOfData(d.data) === value);
    if (named) {
      renameContract(run.open(named), fixed, run.summary);
      run.contractRenames.push({ from: value, to: fixed });
    }
  } else if (errorType === "naming") {
    run.identifierRenames.push({ from: value, to: fixed, scope: "domain", keys: false });
  }
}

function renameOffendingKey(run: NormaliseRun, t: Working, f: Finding, segments: string[], key: string): void {
  const fixed = snakeCase(key);
  const mapPath = segments.slice(0, -1);
  if (!renameKey(t.doc, mapPath, key, fixed)) {
    run.unresolved.push(`${f.message} (cannot rename: ${JSON.stringify(fixed)} exists already)`);
    return;
  }
  t.changes.push({
    op: "move",
    from: f.path,
    path: toPointer([...mapPath, fixed]),
    before: key,
    value: fixed,
    reason: "naming",
  });
  run.summary.push(`${f.path}: key ${JSON.stringify(key)} -> ${JSON.stringify(fixed)} (naming)`);
  run.identifierRenames.push({ from: key, to: fixed, scope: "domain", keys: t.loaded.data.kind === "Workflow" });
}

/** Carries the target's renames to every contract that names what was renamed. */
function spreadRenames(run: NormaliseRun, t: Working): void {
  for (const r of run.contractRenames) {
    for (const c of run.domain)
      replaceReferences(run.open(c), (s) => (s === r.from || (!fqnRe.test(s) && normaliseFqn(s) === r.to) ? r.to : null));
    run.summary.push(`contract renamed ${r.from} -> ${r.to}; references updated`);
  }
  for (const r of run.identifierRenames) {
    const related = r.scope === "domain" ? run.domain : [t.loaded];
    for (const c of related) {
      const w = run.work.get(c.absPath) ?? (mentions(c, r.from) ? run.open(c) : undefined);
      if (w) renameIdentifier(w, r.from, r.to, w === t && r.keys);
    }
  }
}

/** The target's edit first, then the others; only files whose text changes. */
function collectEdits(run: NormaliseRun, t: Working, projectRoot: string): FileEdit[] {
  const edits: FileEdit[] = [];
  for (const w of [t, ...[...run.work.values()].filter((x) => x !== t)]) {
    if (w.changes.length === 0) continue;
    const after = renderEdited(w.loaded.source, w.doc);
    if (after === w.loaded.source) continue;
    edits.push({
      file: projectPath(projectRoot, w.loaded.absPath),
      fqn: fqnOfDoc(w.doc),
      before: w.loaded.source,
      after,
      changes: w.changes,
    });
  }
  return edits;
}

function fixValue(errorType: string, value: string, contract: LoadedContract): string | null {
  switch (errorType) {
    case "naming":
      return snakeCase(value);
    case "graph_edge":
      return screamingSnakeCase(value);
    case "number_prefix": {
      const meta = contract.data.metadata as Record<string, unknown> | undefined;
      return numberPrefixOf(value, typeof meta?.name === "string" ? meta.name : "");
    }
    case "fqn_format":
      return normaliseFqn(value);
    default:
      return null;
  }
}

/** Renames a contract (its metadata name and domain) so that its FQN becomes `to`. */
function renameContract(w: Working, to: string, summary: string[]): void {
  const [, domain, name] = to.split("/") as [string, string, string];
  const meta = w.loaded.data.metadata as Record<string, unknown> | undefined;
  for (const [key, value] of [
    ["name", name],
    ["domain", domain],
  ] as const) {
    const before = meta?.[key];
    if (before === value || typeof before !== "string") continue;
    setValue(w.doc, ["metadata", key], value);
    w.changes.push({ op: "replace", path: `/metadata/${key}`, value, before, reason: "naming" });
  }
  summary.push(`${w.loaded.file}: contract renamed to ${to} to match the corrected reference`);
}

/** Replaces string scalars that are FQN references, as decided by `map` (null keeps the value). */
function replaceReferences(w: Working, map: (s: string) => string | null): void {
  walkDocument(w.doc, ({ node, path, parentKey }) => {
    if (typeof node.value !== "string" || (parentKey !== null && PROSE_KEYS.has(parentKey))) return;
    const next = map(node.value);
    if (next === null || next === node.value) return;
    w.changes.push({ op: "replace", path: toPointer(path), value: next, before: node.value, reason: "reference to a renamed contract" });
    node.value = next;
  });
}

/**
 * Carries the rename of an identifier (a field, a state, an event name) to its uses: string values
 * equal to the old name, and in the renamed contract itself (a workflow) also mapping keys and the
 * `source -> target` keys of guards and side effects. Only invalid names are ever renamed, so an
 * exact match elsewhere is a use of the same identifier, never a coincidence with a valid word.
 */
function renameIdentifier(w: Working, from: string, to: string, keys: boolean): void {
  walkDocument(
    w.doc,
    ({ node, path, parentKey }) => {
      if (node.value !== from || (parentKey !== null && PROSE_KEYS.has(parentKey))) return;
      if (path[0] === "metadata") return;
      node.value = to;
      w.changes.push({ op: "replace", path: toPointer(path), value: to, before: from, reason: `use of renamed ${JSON.stringify(from)}` });
    },
    keys
      ? ({ key, mapPath }) => {
          const text = String(key.value);
          const arrow = /^(\S+) -> (\S+)$/.exec(text);
          let next: string | null = null;
          if (text === from) next = to;
          else if (arrow && (arrow[1] === from || arrow[2] === from)) {
            next = `${arrow[1] === from ? to : arrow[1]} -> ${arrow[2] === from ? to : arrow[2]}`;
          }
          if (next === null) return;
          key.value = next;
          w.changes.push({
            op: "move",
            from: toPointer([...mapPath, text]),
            path: toPointer([...mapPath, next]),
            before: text,
            value: next,
            reason: `use of renamed ${JSON.stringify(from)}`,
          });
        }
      : undefined,
  );
}

function mentions(c: LoadedContract, text: string): boolean {
  return c.source.includes(text);
}

function valueAt(root: unknown, segments: readonly Segment[]): unknown {
  let v: unknown = root;
  for (const s of segments) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[String(s)];
  }
  return v;
}

function firstQuoted(message: string): string | undefined {
  const m = /^(['"])((?:\\.|(?!\1).)*)\1/.exec(message);
  return m?.[2]?.replace(/\\(.)/g, "$1");
}

function fqnOfData(data: Record<string, unknown>): string | null {
  const meta = data.metadata as Record<string, unknown> | undefined;
  if (typeof data.kind !== "string" || typeof meta?.name !== "string" || typeof meta.domain !== "string") return null;
  return `${data.kind.toLowerCase()}/${meta.domain}/${meta.name}`;
}

function fqnOfDoc(doc: Document): string | null {
  const kind = doc.getIn(["kind"]);
  const name = doc.getIn(["metadata", "name"]);
  const domain = doc.getIn(["metadata", "domain"]);
  if (typeof kind !== "string" || typeof name !== "string" || typeof domain !== "string") return null;
  return `${kind.toLowerCase()}/${domain}/${name}`;
}

export function projectPath(projectRoot: string, absPath: string): string {
  const rel = relative(projectRoot, absPath);
  return rel.startsWith("..") ? absPath : rel.split(sep).join("/");
}
