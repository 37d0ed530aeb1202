/**
 * The one merged log of `charter dev`: every line carries the name of the process it came from,
 * padded so the columns line up, coloured per process unless NO_COLOR is set or the output is not
 * a terminal (FORCE_COLOR forces it).
 */
export interface Log {
  /** A line of the supervisor itself. */
  info(line: string): void;
  error(line: string): void;
  /** A line a child process printed. */
  child(name: string, line: string): void;
}

const COLOURS: Record<string, number> = { dev: 1, backend: 36, healer: 35, frontend: 34, install: 33 };
const WIDTH = 9;

export function createLog(write: (text: string) => void, color: boolean): Log {
  const prefix = (name: string): string => {
    const label = name.padEnd(WIDTH);
    return color ? `\u001b[${COLOURS[name] ?? 37}m${label}\u001b[0m| ` : `${label}| `;
  };
  return {
    info: (line) => write(`${prefix("dev")}${line}\n`),
    error: (line) => write(`${prefix("dev")}${color ? `\u001b[31m${line}\u001b[0m` : line}\n`),
    child: (name, line) => write(`${prefix(name)}${line}\n`),
  };
}
