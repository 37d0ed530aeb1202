import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import type { HealerLauncher } from "../../dev/dev.js";
import { projectFromPath } from "../../healer/project.js";
import { findingLine, UserError, useColor } from "../output.js";

interface DevOpts {
  output: string;
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
    .argument("[path]", "project root, domains/ or one domain folder such as examples/helpdesk", "domains")
    .option("-o, --output <dir>", "output root of the generated code (default: runtime/ at the project root)")
    .option("--host <host>", "address every service listens on", "127.0.0.1")
    .option("--port <port>", "backend port (default: $PORT or 8000)", port)
    .option("--healer-port <port>", "Healer port (default: $SVC_HEALER_PORT or 8083)", port)
    .option("--frontend-port <port>", "frontend port (default: $FRONTEND_PORT or 3000)", port)
    .option("--no-frontend", "do not build or start the frontend")
    .addHelpText(
      "after",
      `
PATH is a project root (with domains/), domains/ itself, or one domain folder; the project root
derived from it holds runtime/ and the Healer's state in .forge/ (for a lone domain folder such as
examples/helpdesk: its parent folder). The backend uses the memory store unless DATABASE_URL is set (then PostgreSQL, migrations applied on
start; the memory store is saved in .forge/dev/ on shutdown and restored on start). The first run creates a Python virtual environment (CHARTER_VENV, default <output>/.venv)
and installs the frontend's packages and production build (cached in CHARTER_CACHE_DIR, default
<output>/.cache), saying so as it goes. NO_COLOR turns colours off.`,
    )
    .action(async (path: string, opts: Partial<DevOpts>) => {
      if (!existsSync(path)) throw new UserError(`contract folder not found: ${path}`);
      // The dev loop (supervisor, installers, watchers) loads when it runs, not with every command.
      const [{ terminalAsk }, { DevError, runDev }, { InstallError }, { createLog }, { PortBusyError }] = await Promise.all([
        import("../../dev/destructive.js"),
        import("../../dev/dev.js"),
        import("../../dev/install.js"),
        import("../../dev/log.js"),
        import("../../dev/ports.js"),
      ]);
      // The project model (src/healer/project.ts): the root derived from PATH holds runtime/ and .forge/.
      const output = resolve(opts.output ?? join(projectFromPath(path).root, "runtime"));
      const color = useColor(process.stdout);
      const log = createLog((text) => process.stdout.write(text), color);
      try {
        await runDev({
          contracts: path,
          output,
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
          ask: terminalAsk(process.stdin, process.stdout),
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
