import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { CheckResult, DomainIR } from "../../compiler/index.js";
import { checkDomain } from "../../compiler/index.js";
import type { Finding, ParseCache } from "../../contracts/index.js";
import { generateTarget, writeFiles } from "../../generators/index.js";
import type { DiffRecord, FileEdit, Proposal, Ticket } from "../types.js";
import { removeStaleTemps, writeFileAtomic } from "./atomic.js";
import type { DiffStore } from "./diff-store.js";
import { realPathInside } from "./safety.js";

/** Where a project keeps its contracts, its generated code and the Healer's state. */
export interface ProjectLayout {
  root: string;
  domainsDir: string;
  runtimeDir: string;
  healerDir: string;
  dbPath: string;
  jsonlPath: string;
  diffsDir: string;
}

export function projectLayout(
  root: string,
  overrides: { domainsDir?: string | undefined; runtimeDir?: string | undefined } = {},
): ProjectLayout {
  const r = resolve(root);
  const healerDir = join(r, ".forge", "healer");
  return {
    root: r,
    domainsDir: resolve(r, overrides.domainsDir ?? "domains"),
    runtimeDir: resolve(r, overrides.runtimeDir ?? "runtime"),
    healerDir,
    dbPath: join(healerDir, "healer.db"),
    jsonlPath: join(healerDir, "notifications.jsonl"),
    diffsDir: join(r, ".forge", "diffs"),
  };
}

/** Regenerates the code of a valid domain; returns how many files were produced and how many changed. */
export type Regenerator = (ir: DomainIR, outDir: string) => { files: number; written: number };

/** After a fix, backend, database schema, migrations and frontend (the `all` set) regenerate. */
export const regenerateAll: Regenerator = (ir, outDir) => {
  const files = generateTarget(ir, "all", outDir);
  const written = writeFiles(outDir, files);
  return { files: files.length, written: written.written.length };
};

export type ApplyResult =
  | { ok: true; diff: DiffRecord; regenerated: number; changed: number; remainingErrors: number; note: string }
  | { ok: false; reason: string };

export interface ApplyContext {
  layout: ProjectLayout;
  diffs: DiffStore;
  regenerate: Regenerator;
  /** Parsed contracts of earlier checks (the Healer's), reused while their bytes are unchanged. */
  cache?: ParseCache | undefined;
}

/** Every file a proposal touches: the ticket's contract first. */
export function proposalEdits(p: Proposal): FileEdit[] {
  return [{ file: p.file, fqn: p.contract_fqn, before: p.before, after: p.after, changes: p.changes }, ...p.related];
}

/**
 * Applies a proposal: each file is replaced atomically, the whole domain is validated again, and
 * the change is kept only when it removed the ticket's error without adding any other; otherwise
 * every touched file gets its exact previous bytes back. Then the diff is recorded and the code
 * regenerated. A file already holding the proposal's `after` text was written by an interrupted
 * earlier run and is kept, so applying the same proposal twice finishes the first attempt.
 */
export function applyProposal(ctx: ApplyContext, ticket: Ticket, proposal: Proposal, baseline?: CheckResult): ApplyResult {
  const scanRoot = resolve(ctx.layout.root, ticket.context.scan_root ?? ctx.layout.domainsDir);
  const edits = proposalEdits(proposal);
  const originals = readOriginals(ctx.layout, edits);
  if (!(originals instanceof Map)) return originals;
  for (const abs of originals.keys()) removeStaleTemps(resolve(abs, ".."));
  const before = baseline ?? checkDomain(scanRoot, { cache: ctx.cache });

  const written: string[] = [];
  const restore = (): void => {
    for (const abs of written) writeFileAtomic(abs, originals.get(abs) as Buffer);
  };
  let after: CheckResult;
  try {
    for (const e of edits) {
      const abs = resolve(ctx.layout.root, e.file);
      if (!originals.has(abs)) continue;
      writeFileAtomic(abs, e.after);
      written.push(abs);
    }
    after = checkDomain(scanRoot, { cache: ctx.cache });
  } catch (e) {
    restore();
    return { ok: false, reason: `could not apply the fix: ${(e as Error).message}; the previous contract was restored` };
  }

  const problem = judge(ticket, before, after, ctx.layout.root);
  if (problem) {
    restore();
    return { ok: false, reason: `${problem}; the previous contract was restored` };
  }
  return recordAndRegenerate(ctx, ticket, proposal, edits, scanRoot, after);
}

/**
 * The current bytes of every file the proposal will write, by absolute path; a file already
 * holding its `after` text is left out (an interrupted run wrote it). A failure when a file lies
 * outside the domains directory, is missing or changed since the proposal.
 */
function readOriginals(layout: ProjectLayout, edits: readonly FileEdit[]): Map<string, Buffer> | { ok: false; reason: string } {
  const originals = new Map<string, Buffer>();
  for (const e of edits) {
    const abs = resolve(layout.root, e.file);
    const inside = realPathInside(abs, layout.domainsDir);
    if (!inside.ok) {
      return {
        ok: false,
        reason: `refused to write ${e.file}: it resolves to ${inside.real}, outside the project's domains directory ${inside.base}`,
      };
    }
    let current: Buffer;
    try {
      current = readFileSync(abs);
    } catch {
      return { ok: false, reason: `contract file ${e.file} is missing` };
    }
    const text = current.toString("utf8");
    if (text === e.after) continue;
    if (text !== e.before) return { ok: false, reason: `${e.file} changed since the fix was proposed; retry the ticket to propose again` };
    originals.set(abs, current);
  }
  return originals;
}

/** An accepted fix: its diff recorded and the code regenerated (deferred while the domain has errors). */
function recordAndRegenerate(
  ctx: ApplyContext,
  ticket: Ticket,
  proposal: Proposal,
  edits: FileEdit[],
  scanRoot: string,
  after: CheckResult,
): ApplyResult {
  const record = (regeneration: DiffRecord["regeneration"]): DiffRecord =>
    ctx.diffs.record(ticket, proposal, edits, relativeTo(ctx.layout.root, scanRoot), regeneration);
  if (!after.ir) {
    return {
      ok: true,
      diff: record("deferred"),
      regenerated: 0,
      changed: 0,
      remainingErrors: after.errors,
      note: `regeneration deferred: the domain still has ${after.errors} other error(s)`,
    };
  }
  try {
    const r = ctx.regenerate(after.ir, ctx.layout.runtimeDir);
    ctx.diffs.markRegenerated();
    return {
      ok: true,
      diff: record("done"),
      regenerated: r.files,
      changed: r.written,
      remainingErrors: 0,
      note: `regenerated ${r.files} file(s) into ${relativeTo(ctx.layout.root, ctx.layout.runtimeDir)}/ (${r.written} changed)`,
    };
  } catch (e) {
    // The contract fix is valid on its own; a generator failure is a generator bug to report.
    return {
      ok: true,
      diff: record("failed"),
      regenerated: 0,
      changed: 0,
      remainingErrors: 0,
      note: `regeneration failed: ${(e as Error).message}`,
    };
  }
}

/**
 * Why the new domain is not acceptable, or null. The fix must remove the ticket's own finding and
 * must not add an error: errors are compared as a multiset of (file, code, message), so errors the
 * domain already had (a tier 2 problem waiting for approval) do not block a tier 1 fix.
 */
function judge(ticket: Ticket, before: CheckResult, after: CheckResult, root: string): string | null {
  const key = (f: Finding): string => `${resolve(f.file)}\u0000${f.code}\u0000${f.message}`;
  const counts = new Map<string, number>();
  for (const f of before.findings) if (f.severity === "error") counts.set(key(f), (counts.get(key(f)) ?? 0) + 1);
  const added: Finding[] = [];
  for (const f of after.findings) {
    if (f.severity !== "error") continue;
    const n = counts.get(key(f)) ?? 0;
    if (n > 0) counts.set(key(f), n - 1);
    else added.push(f);
  }
  if (added.length > 0) {
    const shown = added.slice(0, 3).map((f) => `${f.file}:${f.line}: ${f.message}`);
    return `the fixed contract does not validate (${added.length} new error(s): ${shown.join("; ")})`;
  }
  const src = ticket.context.source_path;
  if (src && (ticket.source === "validation" || ticket.source === "compilation")) {
    const abs = resolve(root, src);
    if (after.findings.some((f) => f.severity === "error" && resolve(f.file) === abs && f.message === ticket.raw_error)) {
      return "the change did not remove the error";
    }
  }
  return null;
}

function relativeTo(root: string, abs: string): string {
  const rel = abs.startsWith(`${root}/`) ? abs.slice(root.length + 1) : abs;
  return rel === "" ? "." : rel;
}
