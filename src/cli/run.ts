import { type Command, CommanderError } from "commander";
import { UserError } from "./output.js";

/**
 * Runs a commander program with one error policy: usage mistakes exit 2 with commander's message,
 * user errors exit 1 with one line, and only bugs print a stack trace.
 */
export async function runProgram(program: Command, argv: string[] = process.argv): Promise<void> {
  // `charter forge validate . | head`: a reader that goes away is not an error.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    throw e;
  });
  program.exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  applyToSubcommands(program);
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; anything else commander raises is a usage error.
      process.exitCode = e.exitCode === 0 ? 0 : 2;
      // Older Charter took -o/--output for the report format in some commands.
      if (e.code === "commander.unknownOption" && /'(-o|--output)'/.test(e.message))
        process.stderr.write("hint: -o/--output names an output folder; the report format is --format text|json\n");
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
