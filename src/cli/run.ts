import { type Command, CommanderError } from "commander";
import { UserError } from "./output.js";

/**
 * Runs a commander program with one error policy: usage mistakes exit 2 with commander's message,
 * user errors exit 1 with one line, and only bugs print a stack trace.
 */
export async function runProgram(program: Command, argv: string[] = process.argv): Promise<void> {
  program.exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  applyToSubcommands(program);
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; anything else commander raises is a usage error.
      process.exitCode = e.exitCode === 0 ? 0 : 2;
      return;
    }
    if (e instanceof UserError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exitCode = e.exitCode;
      return;
    }
    throw e;
  }
}

function applyToSubcommands(cmd: Command): void {
  for (const sub of cmd.commands) {
    sub.exitOverride();
    applyToSubcommands(sub);
  }
}
