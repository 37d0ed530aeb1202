import { Command } from "commander";
import type { Healer } from "../../../healer/index.js";
import { UserError } from "../../output.js";
import { openHealer, type ProjectOpts, projectOption } from "./shared.js";

/** `charter healer serve`: the Healer service over HTTP. */
export function serveCommand(): Command {
  return new Command("serve")
    .description("start the Healer service (HTTP): ingest, tickets, status, the ticket view pages and approval")
    .argument("[path]", "project root, domains/ or one domain folder (default: --project or the current directory)")
    .option("--host <host>", "address to listen on (another than loopback needs SVC_HEALER_TOKEN to be safe)", "127.0.0.1")
    .option("--port <port>", "port (default: SVC_HEALER_PORT or 8083)")
    .option("--no-regenerate", "apply fixes to the contracts only; whoever watches them regenerates (charter dev)")
    .addOption(projectOption())
    .action(async (path: string | undefined, opts: ProjectOpts & { host: string; port?: string }) => {
      const port = Number(opts.port ?? process.env.SVC_HEALER_PORT ?? 8083);
      if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UserError(`invalid port: ${opts.port}`);
      const h = await openHealer({ ...opts, project: path ?? opts.project });
      await serveHealer(h, opts.host, port);
    });
}

/** Shortest Healer token accepted outside development, in bytes (as the app's AUTH_SECRET). */
export const MIN_TOKEN_BYTES = 32;

/**
 * A token short enough to guess is refused, as the generated app refuses a weak AUTH_SECRET:
 * only an explicit APP_ENV=development tolerates it. Null when the token is acceptable.
 */
export function weakTokenReason(token: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (token === undefined || Buffer.byteLength(token) >= MIN_TOKEN_BYTES) return null;
  if (env.APP_ENV?.trim().toLowerCase() === "development") return null;
  return `SVC_HEALER_TOKEN is ${Buffer.byteLength(token)} bytes; outside development (APP_ENV=development) it must be at least ${MIN_TOKEN_BYTES} bytes, e.g. openssl rand -hex 32`;
}

/** Runs the service until SIGINT or SIGTERM, then closes it and the store. */
async function serveHealer(h: Healer, host: string, port: number): Promise<void> {
  const { buildHealerServer } = await import("../../../healer/server/app.js");
  try {
    await h.store.open();
  } catch (e) {
    await h.close();
    throw new UserError((e as Error).message);
  }
  // A SQLite store belongs to one service; a PostgreSQL store is one queue shared by replicas.
  const exclusive = !h.store.shared;
  if (exclusive && !(await h.store.tryLock("service"))) {
    await h.close();
    throw new UserError(`another Healer service is already serving ${h.layout.root}; one process owns its store`);
  }
  const token = h.env.SVC_HEALER_TOKEN?.trim() || undefined;
  const weak = weakTokenReason(token, h.env);
  if (weak) {
    await h.close();
    throw new UserError(weak);
  }
  const app = buildHealerServer({ healer: h, token, host, logger: h.env.SVC_HEALER_LOG === "1" });
  try {
    await app.listen({ host, port });
  } catch (e) {
    if (exclusive) await h.store.unlock("service");
    await h.close();
    throw new UserError(`cannot listen on ${host}:${port}: ${(e as Error).message}`);
  }
  const address = app.server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  // The address it really listens on: a wildcard says so, rather than pretending to be localhost.
  const bound = typeof address === "object" && address ? address.address : host;
  const shown = bound.includes(":") ? `[${bound}]` : bound;
  const loopbackOnly = bound === "::1" || bound.startsWith("127.") || bound === "localhost";
  h.publicUrl = `http://${bound === "0.0.0.0" || bound === "::" ? "localhost" : shown}:${actual}`;
  if (!loopbackOnly && !token) {
    process.stderr.write(
      `healer: WARNING: listening on ${shown}, reachable from other machines, without SVC_HEALER_TOKEN: anyone who can reach it can file tickets; set SVC_HEALER_TOKEN (decisions and reads stay limited to this machine meanwhile)\n`,
    );
  }
  // One write, so a reader of the first line has the whole banner.
  process.stdout.write(
    `Healer listening on http://${shown}:${actual}/healer (project ${h.layout.root})\n` +
      `  proposer: ${h.proposer ? h.proposer.name : h.noProposerReason}\n` +
      `  store: ${h.store.backend} ${h.store.location}${h.store.shared ? " (shared by every replica on it)" : ""}\n` +
      (token
        ? "  auth: token required on every POST and ticket read (view pages: sign in once at /healer/login)\n"
        : "  auth: no SVC_HEALER_TOKEN; tickets read and decided only from this machine, same origin\n"),
  );
  // Work left by an earlier run (a kill -9 mid-apply, tickets queued while the service was down)
  // is finished in the background; requests are served meanwhile.
  void h.processQueue().catch((e: Error) => process.stderr.write(`healer: processing the queue failed: ${e.message}\n`));
  await new Promise<void>((resolveStop) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolveStop();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  h.cancelPending();
  await app.close();
  if (exclusive) await h.store.unlock("service");
  await h.close();
}
