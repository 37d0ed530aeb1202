import {
  Agent,
  createServer as createHttpServer,
  get,
  type Server as HttpServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from "node:http";
import { connect, createServer, isIP, type Socket } from "node:net";

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
 * The public port of a server that is replaced while it runs: requests are passed on to whichever
 * server `point` named last, so a new one takes over without a moment in which the port refuses.
 * A request already passed on finishes with the server it reached.
 *
 * It is the frontend's first hop, so it says who the client is: `X-Forwarded-For` is set to the
 * connection's peer, replacing whatever the client sent (a client rotating that header must not
 * become a new client of the backend's per-address login throttle each time). The server behind
 * trusts the header from `upstreamAddress` only (client-address.cjs, TRUSTED_PROXIES).
 * WebSocket upgrades are passed through the same way, byte for byte after the handshake.
 */
export class FrontDoor {
  private target = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: HttpServer;
  private readonly agent = new Agent({ keepAlive: true });
  /** Where the servers behind listen, as this door connects to them (a wildcard host means this machine). */
  private readonly upstream: string;

  constructor(private readonly host: string) {
    this.upstream = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
    this.server = createHttpServer((req, res) => {
      const out = httpRequest(
        { host: this.upstream, port: this.target, method: req.method, path: req.url, headers: forwardedHeaders(req), agent: this.agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopByHop(answer.rawHeaders));
          answer.pipe(res);
        },
      );
      // The server behind went away mid-request: the browser sees a failed request, as from the server.
      out.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      req.pipe(out);
    });
    this.server.on("upgrade", (req: IncomingMessage, client: Socket, head: Buffer) => {
      const upstream = connect({ host: this.upstream, port: this.target }, () => {
        const headers = forwardedHeaders(req);
        const lines = Object.entries(headers).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${x}`));
        upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${lines.join("\r\n")}\r\nconnection: Upgrade\r\n\r\n`);
        if (head.length > 0) upstream.write(head);
        client.pipe(upstream).pipe(client);
      });
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once("close", () => this.sockets.delete(s));
        s.once("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
    });
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.once("close", () => this.sockets.delete(s));
    });
  }

  /** The address requests from this door come from, as the server behind sees it: the one whose X-Forwarded-For it may trust. */
  get upstreamAddress(): string {
    return localHop(this.host);
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
    this.agent.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The address one server of a `charter dev` run reaches another from, as TRUSTED_PROXIES lists it:
 * the host itself when it is an address, loopback when it listens everywhere or by name.
 */
export function localHop(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "::1";
  return isIP(host) ? host : "127.0.0.1,::1";
}

/** Headers of one connection, never passed on by a proxy (RFC 9110 section 7.6.1). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"]);

/** The request's headers for the server behind: hop-by-hop ones dropped, X-Forwarded-For the peer's address only. */
function forwardedHeaders(req: IncomingMessage): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  if (req.headers.upgrade) out.upgrade = req.headers.upgrade;
  out["x-forwarded-for"] = (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
  return out;
}

/** An answer's raw headers without the hop-by-hop ones (this server frames the body itself). */
function withoutHopByHop(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!HOP_BY_HOP.has((raw[i] as string).toLowerCase())) out.push(raw[i] as string, raw[i + 1] as string);
  }
  return out;
}
