import { cpSync } from "node:fs";
import { join } from "node:path";
import { type DevRun, descendants, startDev } from "../dev/support.js";
import { freePort } from "./net.js";

/** A `charter dev` run of the helpdesk example with its frontend, and the ports it serves on. */
export interface ExampleDev {
  dev: DevRun;
  ports: { api: number; healer: number; frontend: number };
}

/** How long a `beforeAll` around startExampleDev may take: its wait, and a minute to spare. */
export const EXAMPLE_DEV_START_MS = 21 * 60_000;

/**
 * Copies the helpdesk example into `dir`, starts `charter dev` on it (backend, Healer, frontend)
 * on free ports, and resolves once it watches the contracts.
 */
export async function startExampleDev(dir: string): Promise<ExampleDev> {
  cpSync("examples/helpdesk", join(dir, "helpdesk"), { recursive: true });
  const ports = { api: await freePort(), healer: await freePort(), frontend: await freePort() };
  const dev = startDev(
    ["helpdesk", "--port", String(ports.api), "--healer-port", String(ports.healer), "--frontend-port", String(ports.frontend)],
    dir,
  );
  // The first run on a machine installs the frontend's packages and builds it: minutes, once.
  await dev.waitFor(/Watching helpdesk for changes/, 20 * 60_000);
  return { dev, ports };
}

/** Kills a `charter dev` that is still running, and every process it started. */
export function killDevTree(dev: DevRun | undefined): void {
  if (!dev || dev.proc.exitCode !== null) return;
  // Read the tree first: once the parent is gone its children belong to init.
  const left = descendants(dev.proc.pid as number);
  dev.proc.kill("SIGKILL");
  for (const pid of left) process.kill(pid, "SIGKILL");
}
