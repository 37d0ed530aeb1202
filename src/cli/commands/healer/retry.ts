import { Command } from "commander";
import { formatOption } from "../../output.js";
import { type ProjectOpts, printJson, projectOption, wantsJson, withHealer } from "./shared.js";

/** `charter healer retry`: asks again about a failed or rejected ticket. */
export function retryCommand(): Command {
  return new Command("retry")
    .description("ask again about a failed or rejected ticket: back in the queue, processed at once")
    .argument("<id>", "ticket id or prefix")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (id: string, opts: ProjectOpts) => {
      await withHealer(opts, async (h) => {
        const t = await h.retry(id);
        if (wantsJson(opts)) printJson(t);
        else process.stdout.write(`ticket ${t.id.slice(0, 8)}: ${t.status}${t.resolution_note ? ` (${t.resolution_note})` : ""}\n`);
      });
    });
}
