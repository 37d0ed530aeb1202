import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTwoFilesPatch } from "diff";
import { compareText } from "../../shared/text.js";
import type { Change, ChangeContract, DiffFile, DiffRecord, FileEdit, Proposal, Ticket } from "../types.js";
import { writeFileAtomic } from "./atomic.js";

/**
 * The diff store (`.forge/diffs/`): one JSON file per applied fix with full before and after
 * snapshots, a unified diff, the reason, origin `HEALER` and a change contract. The file name is
 * derived from the ticket and its proposal, so a run that resumes an interrupted apply rewrites the
 * same record instead of adding a second one.
 */
export class DiffStore {
  /**
   * Records known to need nothing from `markRegenerated` (not deferred). A record leaves
   * `deferred` once and never goes back unless rewritten here, so each file is read once per
   * process instead of the whole history on every fix.
   */
  private readonly settled = new Set<string>();

  constructor(readonly dir: string) {}

  record(
    ticket: Ticket,
    proposal: Proposal,
    edits: readonly FileEdit[],
    scanRoot: string,
    regeneration: DiffRecord["regeneration"],
  ): DiffRecord {
    const id = `${proposal.created_at.replace(/[-:]/g, "").replace(/\..*$/, "")}-${ticket.id.slice(0, 8)}`;
    const files: DiffFile[] = edits.map((e) => ({
      file: e.file,
      fqn: e.fqn,
      before: e.before,
      after: e.after,
      diff: createTwoFilesPatch(`a/${e.file}`, `b/${e.file}`, e.before, e.after, undefined, undefined, { context: 3 }),
      changes: e.changes,
    }));
    const record: DiffRecord = {
      id,
      ticket_id: ticket.id,
      timestamp: proposal.created_at,
      origin: "HEALER",
      // A runtime report's text is the app's words, not the Healer's: it never becomes the reason
      // that later prompts replay as history (docs/threat-model.md).
      reason:
        ticket.source === "validation" || ticket.source === "compilation"
          ? `${ticket.error_type || "error"}: ${ticket.raw_error}`.slice(0, 500)
          : `${ticket.error_type || "error"} reported by the ${ticket.source === "runtime" ? "running app" : "owner"} (ticket ${ticket.id.slice(0, 8)})`,
      contract_fqn: proposal.contract_fqn ?? ticket.contract_fqn,
      method: proposal.method,
      regeneration,
      files,
      change_contract: changeContractOf(
        edits.flatMap((e) => e.changes),
        scanRoot,
      ),
    };
    mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(join(this.dir, `${id}.json`), `${JSON.stringify(record, null, 2)}\n`);
    if (regeneration === "deferred") this.settled.delete(`${id}.json`);
    else this.settled.add(`${id}.json`);
    return record;
  }

  /** Marks records whose regeneration was deferred as done: a full regeneration covers them all. */
  markRegenerated(): void {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith(".json"));
    } catch {
      return;
    }
    for (const n of names) {
      if (this.settled.has(n)) continue;
      const path = join(this.dir, n);
      try {
        const r = JSON.parse(readFileSync(path, "utf8")) as DiffRecord;
        this.settled.add(n);
        if (r.origin !== "HEALER" || r.regeneration !== "deferred") continue;
        writeFileAtomic(path, `${JSON.stringify({ ...r, regeneration: "done" }, null, 2)}\n`);
      } catch {
        // Not a Healer record.
      }
    }
  }

  /** Every record, oldest first; unreadable files are skipped (the store is append-only by hand too). */
  list(): DiffRecord[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith(".json"));
    } catch {
      return [];
    }
    const out: DiffRecord[] = [];
    for (const n of names) {
      try {
        const r = JSON.parse(readFileSync(join(this.dir, n), "utf8")) as DiffRecord;
        if (r.origin === "HEALER" && typeof r.timestamp === "string") out.push(r);
      } catch {
        // A foreign or damaged file is not a Healer record.
      }
    }
    return out.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || compareText(a.id, b.id));
  }

  /** Records that touched a contract, newest first: the history a proposer receives. */
  forContract(fqn: string | null, limit = 5): DiffRecord[] {
    if (!fqn) return [];
    return this.list()
      .filter((r) => r.contract_fqn === fqn || r.files.some((f) => f.fqn === fqn))
      .reverse()
      .slice(0, limit);
  }
}

const RISK = ["none", "low", "medium", "high"] as const;

/**
 * What a set of changes means downstream. Renaming a contract renames a table, an API path and
 * pages (breaking, high risk); renaming or removing a field changes a column and the API shape;
 * a number prefix changes new record numbers; a graph edge or a reference spelling changes no
 * generated surface a client sees.
 */
export function changeContractOf(changes: readonly Change[], scanRoot: string): ChangeContract {
  let breaking = false;
  let risk = 0;
  const surfaces = new Set<string>(["contracts"]);
  const raise = (r: number, s: string[], isBreaking = false): void => {
    risk = Math.max(risk, r);
    for (const x of s) surfaces.add(x);
    breaking ||= isBreaking;
  };
  for (const c of changes) {
    const p = c.op === "move" ? (c.from ?? c.path) : c.path;
    if (/^\/metadata\/(name|domain)$/.test(p)) raise(3, ["api", "database", "frontend"], true);
    else if (/^\/spec\/fields\/[^/]+$/.test(p)) {
      if (c.op === "add") raise(1, ["api", "database", "frontend"]);
      else raise(c.op === "remove" ? 3 : 2, ["api", "database", "frontend"], true);
    } else if (/^\/spec\/fields\/[^/]+\/(type|required|enum|references\/entity)$/.test(p)) raise(2, ["api", "database", "frontend"], true);
    else if (/^\/spec\/(states|transitions|initial)/.test(p)) raise(2, ["api", "database", "frontend"], true);
    else if (/\/graph_edge$/.test(p)) raise(1, ["graph"]);
    else if (/^\/spec\/number_prefix$/.test(p)) raise(1, ["api", "database"]);
    else if (/^\/spec\/(table|endpoints|base_path|route)/.test(p)) raise(2, ["api", "database", "frontend"], true);
    else if (c.reason === "fqn_format" || c.reason === "reference to a renamed contract") raise(0, []);
    else raise(1, ["api", "frontend"]);
  }
  const verification = [`charter forge validate ${scanRoot}`, `charter forge generate ${scanRoot} --target all --check --output runtime`];
  if (surfaces.has("database")) verification.push("review the newest migration under runtime/ before applying it to a database");
  if (surfaces.has("api")) verification.push("run the generated backend's tests against the regenerated app");
  return {
    compatibility: breaking ? "breaking" : "compatible",
    migration_risk: RISK[risk] ?? "high",
    affected_surfaces: [...surfaces].sort(),
    verification,
  };
}
