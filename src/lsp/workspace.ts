import { resolve } from "node:path";
import type { Node } from "yaml";
import { compileDomain, referencesOf } from "../compiler/compile.js";
import type { PathSegments } from "../compiler/context.js";
import {
  displayPath,
  envelopeFqn,
  type Finding,
  findContractFiles,
  type Kind,
  type LoadedContract,
  loadContractFile,
  ParseCache,
  sortFindings,
  validateContractSchema,
} from "../contracts/index.js";

/** A reference from one contract to another, as the compiler resolves it. */
export interface Ref {
  to: string;
  path: PathSegments;
  expect: Kind[];
}

/** One contract file as the server knows it: its last parse and what it names. */
export interface Entry {
  absPath: string;
  /** Position in the domain's listing: the loader's order, which decides which duplicate is "first". */
  order: number;
  contract: LoadedContract | null;
  /** Findings of the parse (YAML errors), when the file could not be read as a contract. */
  parseFindings: Finding[];
  fqn: string | null;
  kind: Kind | null;
  refs: Ref[];
}

/**
 * Findings that depend on the whole domain (a cycle, a name used twice, an event nobody emits): a
 * check of an edit's neighbourhood cannot decide them, so they come from the last full check.
 */
export const DOMAIN_WIDE_CODES: ReadonlySet<string> = new Set([
  "graph.cycle",
  "event.never_emitted",
  "entity.duplicate_table",
  "route.duplicate_base_path",
  "route.duplicate_entity",
  "page.no_route",
  "page.duplicate_route",
  "infra.duplicate_auth",
]);

/**
 * The domain under an editor's root: every contract file parsed once, indexed by FQN and by the
 * contracts that name each FQN, with the editor's unsaved texts standing in for the files. An edit
 * is checked with the compiler on the edited file, the contracts that depend on it and the
 * contracts those need to resolve, never on the whole domain.
 */
export class Workspace {
  readonly cache = new ParseCache();
  readonly entries = new Map<string, Entry>();
  /** Unsaved texts of the open documents, by absolute path. */
  readonly overlays = new Map<string, string>();
  private readonly byFqn = new Map<string, Set<string>>();
  private readonly dependents = new Map<string, Set<string>>();
  private nextOrder = 0;

  constructor(readonly root: string) {}

  /** Parses every contract file of the domain (the overlays in place of their files). */
  load(): void {
    for (const absPath of findContractFiles(this.root)) this.update(absPath);
  }

  /** Re-reads one file (its overlay when open); returns the FQN it had before, for the scope of the edit. */
  update(absPath: string): string | null {
    const before = this.entries.get(absPath);
    if (before) this.unindex(before);
    const overlay = this.overlays.get(absPath);
    let result: ReturnType<typeof loadContractFile>;
    try {
      result = loadContractFile(absPath, this.cache, displayPath(absPath), overlay);
    } catch {
      // Deleted between the listing and the read: it is simply gone.
      this.entries.delete(absPath);
      return before?.fqn ?? null;
    }
    const contract = "contract" in result ? result.contract : null;
    const fqn = contract ? envelopeFqn(contract.data) : null;
    const entry: Entry = {
      absPath,
      order: before?.order ?? this.nextOrder++,
      contract,
      parseFindings: result.findings,
      fqn,
      kind: fqn ? (contract?.data.kind as Kind) : null,
      refs: contract && fqn ? referencesOf(contract) : [],
    };
    this.entries.set(absPath, entry);
    this.index(entry);
    return before?.fqn ?? null;
  }

  remove(absPath: string): string | null {
    const e = this.entries.get(absPath);
    if (!e) return null;
    this.unindex(e);
    this.entries.delete(absPath);
    return e.fqn;
  }

  /** Files defining `fqn` (more than one is a duplicate). */
  filesOf(fqn: string): Entry[] {
    return [...(this.byFqn.get(fqn) ?? [])].map((p) => this.entries.get(p) as Entry);
  }

  entryOfFqn(fqn: string): Entry | undefined {
    return this.filesOf(fqn).sort((a, b) => a.order - b.order)[0];
  }

  /** Contracts whose references name `fqn`. */
  dependentsOf(fqn: string): Entry[] {
    return [...(this.dependents.get(fqn) ?? [])].map((p) => this.entries.get(p) as Entry).filter(Boolean);
  }

  allEntries(): Entry[] {
    return [...this.entries.values()].sort((a, b) => a.order - b.order);
  }

  /**
   * Files an edit of `changed` can change the findings of: the files themselves, the contracts
   * naming them (by their FQN before and after the edit), the workflows an edited entity runs (a
   * workflow's guards are checked against its entities) and, for a mixin or a workflow, one more
   * ring of dependents (their fields reach the entities that reference those).
   */
  affectedBy(changed: readonly string[], formerFqns: readonly (string | null)[] = []): Set<string> {
    const out = new Set<string>();
    const addDependents = (fqn: string | null, depth: number): void => {
      if (!fqn) return;
      for (const d of this.dependentsOf(fqn)) {
        if (out.has(d.absPath) && depth === 0) continue;
        out.add(d.absPath);
        if (depth > 0) addDependents(d.fqn, depth - 1);
      }
    };
    for (const fqn of formerFqns) {
      addDependents(fqn, 0);
      if (fqn) for (const e of this.filesOf(fqn)) out.add(e.absPath);
    }
    for (const absPath of changed) {
      out.add(absPath);
      const e = this.entries.get(absPath);
      if (!e?.fqn) continue;
      for (const same of this.filesOf(e.fqn)) out.add(same.absPath);
      addDependents(e.fqn, e.kind === "Mixin" || e.kind === "Workflow" ? 1 : 0);
      for (const r of e.refs) {
        const target = this.entryOfFqn(r.to);
        if (target?.kind !== "Workflow") continue;
        out.add(target.absPath);
        addDependents(target.fqn, 0);
      }
    }
    return out;
  }

  /**
   * Findings of the `affected` files, from a compile of them and of what they reference (two rings
   * out: an entity's display field may come from the referenced entity's mixin). Domain-wide codes
   * are left out: the caller keeps those from the last full check.
   */
  checkScope(affected: ReadonlySet<string>): Map<string, Finding[]> {
    const scope = new Set<string>(affected);
    const addRefs = (e: Entry, depth: number): void => {
      for (const r of e.refs) {
        for (const t of this.filesOf(r.to)) {
          if (!scope.has(t.absPath)) scope.add(t.absPath);
          if (depth > 0) addRefs(t, depth - 1);
          // The first route of an entity sets the base path every other route of it is built on.
          if (t.kind === "Entity") for (const d of this.dependentsOf(t.fqn as string)) if (d.kind === "Route") scope.add(d.absPath);
        }
      }
    };
    for (const p of affected) {
      const e = this.entries.get(p);
      if (e) addRefs(e, 1);
    }
    const members = [...scope]
      .map((p) => this.entries.get(p))
      .filter((e): e is Entry => e !== undefined)
      .sort((a, b) => a.order - b.order);
    const out = new Map<string, Finding[]>();
    for (const p of affected) out.set(p, []);
    const known: LoadedContract[] = [];
    const valid: LoadedContract[] = [];
    const push = (f: Finding): void => {
      const p = resolve(f.file);
      const list = out.get(p);
      if (list && !DOMAIN_WIDE_CODES.has(f.code)) list.push(f);
    };
    for (const e of members) {
      for (const f of e.parseFindings) push(f);
      if (!e.contract) continue;
      known.push(e.contract);
      const schema = this.cache.schemaFindings(e.contract, validateContractSchema);
      for (const f of schema) push(e.fqn ? { ...f, fqn: e.fqn } : { ...f });
      if (schema.length === 0) valid.push(e.contract);
    }
    for (const f of compileDomain(valid, known, { findingsOnly: true }).findings) push(f);
    for (const list of out.values()) sortFindings(list);
    return out;
  }

  /** The contract's node at `path` (its `range` gives the offsets in the source). */
  nodeAt(e: Entry, path: PathSegments): Node | null {
    return (e.contract?.doc.getIn(path, true) as Node | undefined) ?? null;
  }

  private index(e: Entry): void {
    if (e.fqn) addTo(this.byFqn, e.fqn, e.absPath);
    for (const r of e.refs) addTo(this.dependents, r.to, e.absPath);
  }

  private unindex(e: Entry): void {
    if (e.fqn) this.byFqn.get(e.fqn)?.delete(e.absPath);
    for (const r of e.refs) this.dependents.get(r.to)?.delete(e.absPath);
  }
}

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (set) set.add(value);
  else map.set(key, new Set([value]));
}
