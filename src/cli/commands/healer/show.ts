import { Command } from "commander";
import { traceUrl } from "../../../healer/server/trace-link.js";
import type { Ticket } from "../../../healer/types.js";
import { formatOption } from "../../output.js";
import { type ProjectOpts, printJson, projectOption, wantsJson, withHealer } from "./shared.js";

/** `charter healer show`: prints one ticket, consequences first. */
export function showCommand(): Command {
  return new Command("show")
    .description("show one ticket (full id or a prefix of at least 4 characters)")
    .argument("<id>", "ticket id or prefix")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (id: string, opts: ProjectOpts) => {
      await withHealer(opts, async (h) => {
        const t = await h.store.resolve(id);
        if (wantsJson(opts)) return printJson({ ...t, trace_url: traceUrl(t, h.env) });
        printTicket(t, h.env);
      });
    });
}

function printTicket(t: Ticket, env: NodeJS.ProcessEnv): void {
  const line = (k: string, v: unknown): void => void process.stdout.write(`${k.padEnd(16)}${v}\n`);
  line("id", t.id);
  line("status", t.status);
  line("source", t.source);
  line("contract", t.contract_fqn ?? "-");
  line("error type", t.error_type || "-");
  line("tier", t.tier);
  line("priority", t.priority);
  line("fixable by", t.fixable_by);
  line("occurrences", `${t.occurrences} (last seen ${t.last_seen_at})`);
  line("created", t.created_at);
  if (t.resolved_at) line("resolved", t.resolved_at);
  if (t.regressed_at) line("regression", `came back after its fix, reopened ${t.regressed_at}`);
  if (t.resolution_note) line("note", t.resolution_note);
  if (t.diff_id) line("diff", t.diff_id);
  if (t.request_id) line("request id", t.request_id);
  if (t.trace_id) line("trace", traceUrl(t, env) ?? t.trace_id);
  line("error", t.raw_error);
  const ctx = Object.entries(t.context).filter(([, v]) => v !== undefined && v !== null && v !== "");
  if (ctx.length) {
    process.stdout.write("context\n");
    for (const [k, v] of ctx) process.stdout.write(`  ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}\n`);
  }
  const p = t.proposal;
  if (p) {
    // What approving does comes first, with the ids `--accept-risk` confirms.
    if (p.risk?.length) process.stdout.write(`consequences\n${p.risk.map((f) => `  ${f.id}\n    [${f.level}] ${f.message}\n`).join("")}`);
    process.stdout.write(`proposal        ${p.method}, confidence ${p.confidence}\n  ${p.explanation}\n`);
    for (const e of [{ file: p.file, changes: p.changes }, ...p.related]) {
      process.stdout.write(`  ${e.file}\n`);
      for (const c of e.changes) {
        const value = c.op === "remove" ? "(removed)" : JSON.stringify(c.value);
        process.stdout.write(
          `    ${c.op === "move" ? `${c.from} -> ` : ""}${c.path} = ${value}${c.before !== undefined ? ` (was ${JSON.stringify(c.before)})` : ""}\n`,
        );
      }
    }
  }
}
