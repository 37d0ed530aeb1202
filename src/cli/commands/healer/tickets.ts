import { Command, Option } from "commander";
import { PRIORITIES, type Priority, TICKET_STATUSES, type TicketStatus } from "../../../healer/types.js";
import { formatOption } from "../../output.js";
import { type ProjectOpts, printJson, projectOption, wantsJson, withHealer } from "./shared.js";

/** `charter healer tickets`: lists tickets. */
export function ticketsCommand(): Command {
  return new Command("tickets")
    .description("list tickets in queue order (priority, then oldest first)")
    .addOption(new Option("--status <status>", "only tickets in this status").choices([...TICKET_STATUSES]))
    .addOption(new Option("--priority <priority>", "only tickets of this priority").choices([...PRIORITIES]))
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (opts: ProjectOpts & { status?: TicketStatus; priority?: Priority }) => {
      await withHealer(opts, async (h) => {
        const list = await h.store.list({ status: opts.status, priority: opts.priority });
        if (wantsJson(opts)) return printJson(list);
        if (list.length === 0) return void process.stdout.write("no tickets\n");
        process.stdout.write(
          `${"ID".padEnd(8)}  ${"STATUS".padEnd(9)}  T  ${"PRIORITY".padEnd(8)}  ${"TYPE".padEnd(17)}  ${"SEEN".padStart(4)}  CONTRACT\n`,
        );
        for (const t of list) {
          process.stdout.write(
            `${t.id.slice(0, 8)}  ${t.status.padEnd(9)}  ${t.tier}  ${t.priority.padEnd(8)}  ${(t.error_type || "-").padEnd(17)}  ${String(t.occurrences).padStart(4)}  ${t.contract_fqn ?? "-"}\n`,
          );
        }
        process.stdout.write(`${list.length} ticket(s)\n`);
      });
    });
}
