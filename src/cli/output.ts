import { Option } from "commander";
import { type Finding, formatFinding } from "../contracts/index.js";

/** Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org). */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  const noColor = process.env.NO_COLOR;
  if (noColor !== undefined && noColor !== "") return false;
  if (process.env.FORCE_COLOR && process.env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true;
}

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;

export function paint(text: string, style: keyof typeof codes, enabled = useColor()): string {
  return enabled ? `\u001b[${codes[style]}m${text}\u001b[0m` : text;
}

export function findingLine(f: Finding, color = useColor()): string {
  return formatFinding(f, (sev) => paint(sev, sev === "error" ? "red" : "yellow", color));
}

/** Errors the user can fix: printed as one line, exit code 1, never a stack trace. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/**
 * `--format text|json`, the report format of every command that prints one. `-o/--output` always
 * names an output folder, so a command without one has no `-o` at all.
 */
export function formatOption(): Option {
  return new Option("--format <format>", "report format").choices(["text", "json"]).default("text");
}
