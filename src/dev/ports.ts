import { get } from "node:http";
import { connect, createServer, type Server, type Socket } from "node:net";

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

/** A port the kernel picks on `host`, free when this resolves. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The public port of a server that is replaced while it runs: connections are passed through, byte
 * for byte, to whichever server `point` named last, so a new one takes over without a moment
 * in which the port refuses. Connections opened before a switch stay with the server they reached.
 */
export class FrontDoor {
  private target = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(private readonly host: string) {
    this.server = createServer((client) => {
      const upstream = connect({ host: this.host, port: this.target });
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once("close", () => this.sockets.delete(s));
        // One side failing ends the pair; the browser sees a closed connection, as from the server.
        s.once("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen({ host: this.host, port, exclusive: true }, () => resolve());
    });
  }

  point(port: number): void {
    this.target = port;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
