import { Command } from "commander";
import { formatOption } from "../../output.js";
import { type ProjectOpts, printJson, projectOption, wantsJson, withHealer } from "./shared.js";

/** `charter healer history`: applied fixes from the diff store. */
export function historyCommand(): Command {
  return new Command("history")
    .description("applied fixes from the diff store: date, contract, reason, number of changes")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (opts: ProjectOpts) => {
      await withHealer(opts, (h) => {
        const records = h.history();
        if (wantsJson(opts)) {
          return printJson(
            records.map((r) => ({
              id: r.id,
              date: r.timestamp,
              contract: r.contract_fqn,
              reason: r.reason,
              changes: r.files.reduce((n, f) => n + f.changes.length, 0),
              files: r.files.map((f) => f.file),
              ticket_id: r.ticket_id,
              change_contract: r.change_contract,
            })),
          );
        }
        if (records.length === 0) return void process.stdout.write("no applied fixes yet\n");
        for (const r of records) {
          const n = r.files.reduce((k, f) => k + f.changes.length, 0);
          process.stdout.write(
            `${r.timestamp}  ${r.contract_fqn ?? "-"}  ${n} change(s)  ${r.change_contract.compatibility}  ${r.reason}\n`,
          );
        }
      });
    });
}
