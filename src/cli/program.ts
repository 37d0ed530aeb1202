import { Command } from "commander";
import { devCommand } from "./commands/dev.js";
import { doctorCommand } from "./commands/doctor.js";
import { extractCommand } from "./commands/extract.js";
import { factoryCommand } from "./commands/factory.js";
import { forgeCommand } from "./commands/forge.js";
import { healerCommand } from "./commands/healer/index.js";
import { lspCommand } from "./commands/lsp.js";
import { planCommand } from "./commands/plan.js";
import { VERSION } from "./version.js";

/** `charter`: one command group per stage of the pipeline. */
export function charterProgram(): Command {
  const program = new Command("charter")
    .description("Contract-driven application generator")
    .version(VERSION)
    .showHelpAfterError()
    .showSuggestionAfterError();
  program.addCommand(forgeCommand());
  program.addCommand(healerCommand());
  program.addCommand(doctorCommand());
  program.addCommand(factoryCommand());
  program.addCommand(extractCommand());
  program.addCommand(devCommand());
  program.addCommand(lspCommand());
  program.addCommand(planCommand());
  return program;
}
