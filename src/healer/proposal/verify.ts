import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import type { CheckResult } from "../../compiler/index.js";
import { checkDomain } from "../../compiler/index.js";
import type { Finding } from "../../contracts/index.js";
import { ALL_TARGETS, generateTarget, writeFiles } from "../../generators/index.js";
import type { Ticket, Verification } from "../types.js";

/**
 * Checks a candidate contract without touching the project: the domain is copied into a scratch
 * directory (symlinks followed, so the copy holds plain files), the candidate replaces the
 * contract there, and the copy is validated and, for a verification, regenerated.
 */
export function withCandidate<T>(scanRoot: string, targetAbs: string, after: string, fn: (domain: string, scratch: string) => T): T {
  const scratch = mkdtempSync(join(tmpdir(), "charter-verify-"));
  try {
    return fn(candidateDomain(scanRoot, targetAbs, after, scratch), scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** `withCandidate` for an async `fn`: the scratch copy stays until its promise settles. */
export async function withCandidateAsync<T>(
  scanRoot: string,
  targetAbs: string,
  after: string,
  fn: (domain: string, scratch: string) => Promise<T>,
): Promise<T> {
  const scratch = mkdtempSync(join(tmpdir(), "charter-verify-"));
  try {
    return await fn(candidateDomain(scanRoot, targetAbs, after, scratch), scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A copy of the domain under `scratch` with `after` as the target contract's text. */
function candidateDomain(scanRoot: string, targetAbs: string, after: string, scratch: string): string {
  const domain = join(scratch, "domain");
  cpSync(scanRoot, domain, { recursive: true, dereference: true });
  const target = join(domain, relative(scanRoot, targetAbs));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, after);
  return domain;
}

/**
 * What would be wrong with `after` as the new text of the ticket's contract, compared with the
 * domain as it is: errors the domain does not have today (as a multiset of file, code, message,
 * so errors it already had do not count), and, for a validation ticket, its own error still there.
 */
export function candidateProblems(scanRoot: string, targetAbs: string, after: string, ticket: Ticket, before: CheckResult): string[] {
  return withCandidate(scanRoot, targetAbs, after, (domain) => {
    const now = checkDomain(domain);
    const key = (root: string, f: Finding): string => `${relative(root, resolve(f.file))}\u0000${f.code}\u0000${f.message}`;
    const counts = new Map<string, number>();
    for (const f of before.findings) if (f.severity === "error") counts.set(key(scanRoot, f), (counts.get(key(scanRoot, f)) ?? 0) + 1);
    const problems: string[] = [];
    const own = relative(scanRoot, targetAbs);
    for (const f of now.findings) {
      if (f.severity !== "error") continue;
      const k = key(domain, f);
      const n = counts.get(k) ?? 0;
      if (n > 0) {
        counts.set(k, n - 1);
        if ((ticket.source === "validation" || ticket.source === "compilation") && relative(domain, resolve(f.file)) === own) {
          if (f.message === ticket.raw_error) problems.push(`the error is still there: ${f.message}${f.path ? ` at ${f.path}` : ""}`);
        }
        continue;
      }
      problems.push(`${f.message}${f.path ? ` at ${f.path}` : ""} [${f.code}]`);
    }
    return problems;
  });
}

/**
 * Beyond the spec: before anyone approves a proposal, it is regenerated in a scratch directory,
 * and the view page shows whether the domain validates and every target of `all` generates.
 */
export function verifyCandidate(scanRoot: string, targetAbs: string, after: string): Verification {
  const started = Date.now();
  return withCandidate(scanRoot, targetAbs, after, (domain, scratch) => {
    const check = checkDomain(domain);
    const errors = check.findings
      .filter((f) => f.severity === "error")
      .slice(0, 10)
      .map((f) => `${relative(domain, resolve(f.file))}:${f.line}: ${f.message}`);
    const targets: Verification["targets"] = [];
    if (check.ir) {
      const out = join(scratch, "runtime");
      for (const target of ALL_TARGETS) {
        try {
          const files = generateTarget(check.ir, target, out);
          writeFiles(out, files);
          targets.push({ target, ok: true, files: files.length });
        } catch (e) {
          targets.push({ target, ok: false, files: 0, error: (e as Error).message });
        }
      }
    }
    return {
      validates: check.errors === 0,
      errors,
      targets,
      generates: targets.length > 0 && targets.every((t) => t.ok),
      ms: Date.now() - started,
    };
  });
}
