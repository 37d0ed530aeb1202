import { Command } from "commander";

/** `charter extract PATH --domain D`: reverse-engineer a code base into contracts. */
export function extractCommand(): Command {
  return new Command("extract").description("reverse-engineer contracts from an existing code base");
}
