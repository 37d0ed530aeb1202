import { Command } from "commander";
import { formatOption } from "../../output.js";
import { type ProjectOpts, printJson, projectOption, wantsJson, withHealer } from "./shared.js";

/** `charter healer reject`: rejects a proposed fix. */
export function rejectCommand(): Command {
  return new Command("reject")
    .description("reject a proposed fix (or dismiss a queued ticket)")
    .argument("<id>", "ticket id or prefix")
    .option("--reason <text>", "why the fix is rejected (stored as the resolution note)")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (id: string, opts: ProjectOpts & { reason?: string }) => {
      await withHealer(opts, async (h) => {
        const t = await h.reject(id, opts.reason ?? "");
        if (wantsJson(opts)) printJson(t);
        else process.stdout.write(`ticket ${t.id.slice(0, 8)}: rejected (${t.resolution_note})\n`);
      });
    });
}
