import { existsSync } from "node:fs";
import { Command } from "commander";
import type { FixSummary } from "../../../healer/index.js";
import { projectFromPath } from "../../../healer/project.js";
import { formatOption, paint, UserError, useColor } from "../../output.js";
import { type ProjectOpts, printJson, projectOption, wantsJson, withHealer } from "./shared.js";

/** `charter healer fix`: scans contracts and fixes what it can. */
export function fixCommand(): Command {
  return new Command("fix")
    .description("scan contracts (default domains/), file tickets for the errors, and process the queue")
    .argument("[path]", "project root, domains/ or one domain folder to scan (default: the project's domains/)")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (path: string | undefined, opts: ProjectOpts) => {
      if (path !== undefined && !existsSync(path)) throw new UserError(`path not found: ${path}`);
      await withHealer({ ...opts, path }, async (h) => {
        const target = path === undefined ? h.scanDir : projectFromPath(path).scanDir;
        if (!existsSync(target)) throw new UserError(`path not found: ${path ?? h.layout.domainsDir}`);
        const summary = await h.fix(target);
        if (wantsJson(opts)) printJson(summary);
        else printFix(summary);
        // A ticket that could not be fixed, or an error left with no fix waiting for approval, is a failed run.
        if (summary.failed > 0 || (summary.remainingErrors > 0 && summary.awaiting === 0)) process.exitCode = 1;
      });
    });
}

function printFix(s: FixSummary): void {
  const color = useColor();
  process.stdout.write(
    `\nScanned ${s.scanned}: ${s.contracts} contracts, ${s.errors} error(s), ${s.warnings} warning(s)\n` +
      `Tickets: ${s.tickets} (${s.newTickets} new)\n` +
      `Fixes applied: ${paint(String(s.applied), "green", color)}\n` +
      `Fixes awaiting approval: ${paint(String(s.awaiting), s.awaiting ? "yellow" : "green", color)}\n` +
      `Failed: ${paint(String(s.failed), s.failed ? "red" : "green", color)}\n` +
      `Errors remaining: ${s.remainingErrors}\n`,
  );
  if (s.regenerated > 0) process.stdout.write(`Regenerated files: ${s.regenerated}\n`);
}
