import { get } from "node:http";
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

/** One GET on a connection of its own, closed after the answer: its status, or null when refused. */
function probe(url: string): Promise<number | null> {
  return new Promise((resolve) => {
    // No keep-alive: an idle pooled connection would hold up the graceful stop of a restarted server.
    const req = get(url, { agent: false, headers: { connection: "close" }, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? null);
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(null));
  });
}

/** Polls `url` until it answers below 500, the child dies, or the timeout passes. */
export async function waitForHttp(url: string, alive: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && alive()) {
    const status = await probe(url);
    if (status !== null && status < 500) return true;
    await new Promise((r) => setTimeout(r, 40));
  }
  return false;
}
