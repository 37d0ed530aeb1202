import { Command } from "commander";
import { HealerError } from "../../../healer/errors.js";
import { formatOption } from "../../output.js";
import { type ProjectOpts, printJson, projectOption, wantsJson, withHealer } from "./shared.js";

/** `charter healer approve`: applies a proposed fix. */
export function approveCommand(): Command {
  return new Command("approve")
    .description("approve a proposed fix and apply it")
    .argument("<id>", "ticket id or prefix")
    .option("--accept-risk", "confirm the proposal's findings that destroy data or weaken a rule (listed by `healer show`)")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (id: string, opts: ProjectOpts & { acceptRisk?: boolean }) => {
      await withHealer(opts, async (h) => {
        const t = await h.approve(id, opts.acceptRisk === true ? true : []).catch((e: unknown) => {
          if (e instanceof HealerError && e.code === "risk_not_accepted")
            throw new HealerError(e.code, `${e.message}; read them with \`charter healer show ${id}\`, then approve with --accept-risk`);
          throw e;
        });
        if (wantsJson(opts)) printJson(t);
        else process.stdout.write(`ticket ${t.id.slice(0, 8)}: ${t.status}${t.resolution_note ? ` (${t.resolution_note})` : ""}\n`);
        if (t.status === "failed") process.exitCode = 1;
      });
    });
}
