import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { DevError, type HealerLauncher, runDev } from "../../dev/dev.js";
import { InstallError } from "../../dev/install.js";
import { createLog } from "../../dev/log.js";
import { PortBusyError } from "../../dev/ports.js";
import { findingLine, UserError, useColor } from "../output.js";

interface DevOpts {
  output: string;
  project: string;
  host: string;
  port: number;
  healerPort: number;
  frontendPort: number;
  frontend: boolean;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError("not a port number (1-65535)");
  return n;
}

function envPort(name: string, fallback: number): number {
  const value = process.env[name];
  if (!value) return fallback;
  try {
    return port(value);
  } catch {
    throw new UserError(`${name}=${value} is not a port number (1-65535)`);
  }
}

/** The Healer service is this same program's `charter healer serve`, run as a child process. */
function healerLauncher(): HealerLauncher {
  const script = process.argv[1];
  if (!script) throw new UserError("cannot locate the charter script to start the Healer (process.argv[1] is empty)");
  return { command: process.execPath, args: [script, "healer", "serve"] };
}

/** `charter dev [PATH]`: the generated stack on this machine, regenerated as the contracts change. */
export function devCommand(): Command {
  return new Command("dev")
    .description("generate and run the backend, the Healer and the frontend; restart the backend when the contracts change")
    .argument("[path]", "contract folder (default: domains/)", "domains")
    .option("-o, --output <dir>", "output root of the generated code", "runtime")
    .option("--project <dir>", "project root, where .forge/ (Healer state) lives", ".")
    .option("--host <host>", "address every service listens on", "127.0.0.1")
    .option("--port <port>", "backend port (default: $PORT or 8000)", port)
    .option("--healer-port <port>", "Healer port (default: $SVC_HEALER_PORT or 8083)", port)
    .option("--frontend-port <port>", "frontend port (default: $FRONTEND_PORT or 3000)", port)
    .option("--no-frontend", "do not build or start the frontend")
    .addHelpText(
      "after",
      `
The backend uses the memory store unless DATABASE_URL is set (then PostgreSQL, migrations applied on
start). The first run creates a Python virtual environment (CHARTER_VENV, default <output>/.venv)
and installs the frontend's packages and production build (cached in CHARTER_CACHE_DIR, default
<output>/.cache), saying so as it goes. NO_COLOR turns colours off.`,
    )
    .action(async (path: string, opts: Partial<DevOpts>) => {
      if (!existsSync(path)) throw new UserError(`contract folder not found: ${path}`);
      const output = resolve(opts.output ?? "runtime");
      const color = useColor(process.stdout);
      const log = createLog((text) => process.stdout.write(text), color);
      try {
        await runDev({
          contracts: path,
          output: opts.output ?? "runtime",
          projectRoot: resolve(opts.project ?? "."),
          host: opts.host ?? "127.0.0.1",
          port: opts.port ?? envPort("PORT", 8000),
          healerPort: opts.healerPort ?? envPort("SVC_HEALER_PORT", 8083),
          frontendPort: opts.frontendPort ?? envPort("FRONTEND_PORT", 3000),
          frontend: opts.frontend !== false,
          healer: healerLauncher(),
          venvDir: resolve(process.env.CHARTER_VENV ?? join(output, ".venv")),
          cacheDir: resolve(process.env.CHARTER_CACHE_DIR ?? join(output, ".cache")),
          env: process.env,
          log,
          printFindings: (findings) => {
            for (const f of findings) process.stderr.write(`${findingLine(f, useColor(process.stderr))}\n`);
          },
        });
      } catch (e) {
        if (e instanceof DevError || e instanceof PortBusyError || e instanceof InstallError) throw new UserError(e.message);
        throw e;
      }
    });
}
