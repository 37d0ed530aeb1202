import { createServer } from "node:net";

/** A port someone else already listens on: the user gets one line naming the service and a way out. */
export class PortBusyError extends Error {
  constructor(
    readonly service: string,
    readonly port: number,
    readonly hint: string,
  ) {
    super(`port ${port} (${service}) is already in use by another process; stop it or ${hint}`);
  }
}

/** Resolves when `host:port` can be bound; rejects with PortBusyError when it is taken. */
export function ensurePortFree(host: string, port: number, service: string, hint: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (e: NodeJS.ErrnoException) => {
      reject(e.code === "EADDRINUSE" || e.code === "EACCES" ? new PortBusyError(service, port, hint) : e);
    });
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** Polls `url` until it answers below 500, the child dies, or the timeout passes. */
export async function waitForHttp(url: string, alive: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && alive()) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (r.status < 500) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
