import { Command } from "commander";
import { VERSION } from "./version.js";

/**
 * Each command group's module, imported when the group runs: `charter forge generate` loads neither
 * the Healer (SQLite, the LLM clients, the web server) nor the language server nor the importers,
 * about a third of the CLI's start-up.
 */
const GROUPS: readonly (readonly [string, () => Promise<Command>])[] = [
  ["forge", async () => (await import("./commands/forge.js")).forgeCommand()],
  ["healer", async () => (await import("./commands/healer/index.js")).healerCommand()],
  ["doctor", async () => (await import("./commands/doctor.js")).doctorCommand()],
  ["factory", async () => (await import("./commands/factory.js")).factoryCommand()],
  ["extract", async () => (await import("./commands/extract.js")).extractCommand()],
  ["dev", async () => (await import("./commands/dev.js")).devCommand()],
  ["lsp", async () => (await import("./commands/lsp.js")).lspCommand()],
  ["plan", async () => (await import("./commands/plan.js")).planCommand()],
];

/**
 * `charter`: one command group per stage of the pipeline. `group`, the first word of the command
 * line: when it names a group, that group alone is loaded; anything else (no word, --help, a typo)
 * loads them all, for the help and the suggestions.
 */
export async function charterProgram(group?: string): Promise<Command> {
  const program = new Command("charter")
    .description("Contract-driven application generator")
    .version(VERSION)
    .showHelpAfterError()
    .showSuggestionAfterError();
  const named = GROUPS.filter(([name]) => name === group);
  for (const [, load] of named.length > 0 ? named : GROUPS) program.addCommand(await load());
  return program;
}
