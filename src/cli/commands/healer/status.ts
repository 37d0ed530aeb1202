import { Command } from "commander";
import { TICKET_STATUSES } from "../../../healer/types.js";
import { formatOption, paint, useColor } from "../../output.js";
import { type ProjectOpts, printJson, projectOption, wantsJson, withHealer } from "./shared.js";

/** `charter healer status`: queue counts and success rates. */
export function statusCommand(): Command {
  return new Command("status")
    .description("queue counts per status, success rate per tier, recurring errors and recent resolutions")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (opts: ProjectOpts) => {
      await withHealer(opts, async (h) => {
        const s = await h.status();
        if (wantsJson(opts)) return printJson(s);
        const color = useColor();
        for (const st of TICKET_STATUSES) process.stdout.write(`${st.padEnd(10)} ${s.queue[st]}\n`);
        process.stdout.write(`${"total".padEnd(10)} ${s.total}\n`);
        const pct = (x: number): string => `${Math.round(x * 100)}%`;
        process.stdout.write(
          `\nsuccess rate: tier 1 ${pct(s.success_rate.tier_1)}, tier 2 ${pct(s.success_rate.tier_2)}, tier 3 ${pct(s.success_rate.tier_3)}\n`,
        );
        if (s.recurring.length) {
          process.stdout.write(`${paint("recurring errors", "bold", color)}\n`);
          for (const r of s.recurring)
            process.stdout.write(`  ${r.count}x ${r.contract_fqn || "(no contract)"} ${r.error_type || "unclassified"}\n`);
        }
        if (s.recent.length) {
          process.stdout.write(`${paint("recent resolutions", "bold", color)}\n`);
          for (const r of s.recent) process.stdout.write(`  ${r.id.slice(0, 8)} ${r.status.padEnd(8)} tier ${r.tier} ${r.fqn}\n`);
        }
      });
    });
}
