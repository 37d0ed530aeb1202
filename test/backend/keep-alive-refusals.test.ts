import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { generateTarget } from "../../src/generators/registry.js";
import { writeFiles } from "../../src/generators/writer.js";
import { generateBackend, type RunningBackend, startGeneratedBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { freePort, waitForHttp } from "../support/net.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { ensureVenvFromFile, VENV_BIN } from "../support/python.js";
import { client } from "./http.js";

/**
 * A refused body on a keep-alive connection (issue 40): the server either says it closes the
 * connection (`Connection: close`) and does, or it keeps the connection and the next request on it
 * is answered. What a client must never meet is a connection dropped unannounced: its next request
 * (a POST it cannot safely retry) goes into a closing socket. Raw sockets, so that which of the two
 * happened is seen, not hidden by an HTTP client that retries or opens a new connection.
 */
const ROUNDS = 50;
const LIMIT = 262_144;

interface Response {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Reads HTTP/1.1 responses off one socket, in order. */
class Connection {
  private buffer = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    const end = () => {
      this.ended = true;
      this.wake?.();
    };
    socket.on("end", end);
    socket.on("close", end);
    socket.on("error", end);
  }

  static open(port: number): Promise<Connection> {
    return new Promise((done, fail) => {
      const socket = connect(port, "127.0.0.1", () => done(new Connection(socket)));
      socket.once("error", fail);
    });
  }

  get closed(): boolean {
    return this.ended;
  }

  send(raw: string | Buffer): void {
    this.socket.write(raw);
  }

  /** The next whole response, or null when the server closed the connection first. */
  async response(): Promise<Response | null> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end >= 0) {
        const [statusLine = "", ...lines] = this.buffer.subarray(0, end).toString("latin1").split("\r\n");
        const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
        const length = Number(headers.get("content-length") ?? 0);
        if (this.buffer.length >= end + 4 + length) {
          const body = this.buffer.subarray(end + 4, end + 4 + length).toString("utf8");
          this.buffer = this.buffer.subarray(end + 4 + length);
          return { status: Number(statusLine.split(" ")[1]), headers, body };
        }
      }
      if (this.ended) return null;
      if (Date.now() > deadline) throw new Error(`no response within 15 s; got ${this.buffer.toString("latin1").slice(0, 200)}`);
      await new Promise<void>((wake) => {
        this.wake = wake;
        setTimeout(wake, 200);
      });
      this.wake = null;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

function request(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Buffer {
  const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
  const head = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== undefined && !headers["Transfer-Encoding"]) head.push(`Content-Length: ${bytes.length}`);
  return Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`), bytes]);
}

function chunked(body: string): string {
  const chunks: string[] = [];
  for (let i = 0; i < body.length; i += 4096) {
    const part = body.slice(i, i + 4096);
    chunks.push(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
  }
  return `${chunks.join("")}0\r\n\r\n`;
}

describe.each(["postgres", "memory"] as const)("a refused body on a keep-alive connection, %s", (backend) => {
  let root: string;
  let app: RunningBackend;
  let auth: string;
  let customerId: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `charter-keep-alive-${backend}-`));
    const db = backend === "postgres" ? freshDatabase("charter_keep_alive") : "";
    app = await startGeneratedBackend({
      domainDir: "examples/helpdesk",
      outDir: join(root, "out"),
      backend,
      ...(db ? { databaseUrl: databaseUrl(db) } : {}),
      env: { MAX_BODY_BYTES: String(LIMIT) },
    });
    const login = await client(app.url).post("/auth/login", { email: "admin@example.com", password: "admin-password" });
    auth = `Bearer ${login.body.access_token}`;
    const customer = await client(app.url, login.body.access_token).post("/customers", { name: "Ada", email: "ada@example.com" });
    customerId = customer.body.id as string;
  }, 180_000);

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const json = () => ({ "Content-Type": "application/json", Authorization: auth });
  const deep = () => `{"title": "t", "customer_id": "${customerId}", "custom_data": {"x": ${"[".repeat(100_000)}${"]".repeat(100_000)}}}`;
  const refusals: [string, () => Buffer, number][] = [
    ["a 200 KB deeply nested JSON body", () => request("POST", "/tickets", json(), deep()), 400],
    ["a body over the limit", () => request("POST", "/tickets", json(), "x".repeat(LIMIT * 2)), 413],
    [
      "a chunked body over the limit",
      () => request("POST", "/tickets", { ...json(), "Transfer-Encoding": "chunked" }, chunked(`"${"x".repeat(LIMIT * 2)}"`)),
      413,
    ],
    [
      "a body that is not JSON",
      () => request("POST", "/tickets", { "Content-Type": "text/plain", Authorization: auth }, "x".repeat(4000)),
      415,
    ],
    ["invalid JSON", () => request("POST", "/tickets", json(), `{"title": ${"x".repeat(4000)}`), 422],
  ];

  it.each(refusals)(
    `answers the next request after %s, or says Connection: close (${ROUNDS} times)`,
    async (_what, refused, status) => {
      let kept = 0;
      let announced = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const connection = await Connection.open(app.port);
        try {
          connection.send(refused());
          const first = await connection.response();
          expect(first?.status, `round ${round}: ${first?.body}`).toBe(status);
          if (first?.headers.get("connection")?.toLowerCase() === "close") {
            // Said: the server must then close it, and a client opens a new one.
            expect(await connection.response()).toBeNull();
            expect(connection.closed).toBe(true);
            announced++;
            continue;
          }
          connection.send(request("GET", "/health", {}));
          const next = await connection.response();
          expect(next?.status, `round ${round}: the connection was dropped unannounced`).toBe(200);
          kept++;
        } finally {
          connection.close();
        }
      }
      expect(kept + announced).toBe(ROUNDS);
    },
    180_000,
  );

  it(`creates after each refused deep body through fetch's keep-alive pool (${ROUNDS} times)`, async () => {
    // As the issue saw it: fetch does not retry a POST whose connection the server dropped.
    for (let round = 0; round < ROUNDS; round++) {
      const refused = await fetch(`${app.url}/tickets`, { method: "POST", headers: json(), body: deep() });
      expect(refused.status).toBe(400);
      await refused.arrayBuffer();
      const body = JSON.stringify({ title: `After ${round}`, customer_id: customerId });
      const created = await fetch(`${app.url}/tickets`, { method: "POST", headers: json(), body });
      expect(created.status, `round ${round}`).toBe(201);
      await created.arrayBuffer();
    }
  }, 180_000);
});

/**
 * An idle keep-alive connection is closed by the client's pool, not by the server: fetch keeps one
 * about 4 s (on coarse timers), proxies 60 s, and with uvicorn's default of 5 s a request sent on a
 * connection the server is closing that moment is lost, announced by nothing (issue 40's `fetch
 * failed`, "other side closed"). The image's own command, read from the generated Dockerfile and
 * run here, keeps one open past that.
 */
describe("the image's command keeps an idle connection past the clients' pools", () => {
  it("answers a request on a connection idle for 6 s", async () => {
    const root = mkdtempSync(join(tmpdir(), "charter-keep-alive-idle-"));
    const out = join(root, "out");
    const backendDir = generateBackend("examples/helpdesk", out);
    const { ir } = checkDomain("examples/helpdesk");
    if (!ir) throw new Error("examples/helpdesk does not compile");
    writeFiles(out, generateTarget(ir, "docker", out));
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
    const cmd = /^CMD \["sh", "-c", (".*")\]$/m.exec(readFileSync(join(backendDir, "Dockerfile"), "utf8"))?.[1];
    if (!cmd) throw new Error('no `CMD ["sh", "-c", ...]` in the generated Dockerfile');
    const port = await freePort();
    const child = spawn("sh", ["-c", (JSON.parse(cmd) as string).replace("--host 0.0.0.0", "--host 127.0.0.1")], {
      cwd: backendDir,
      env: {
        ...process.env,
        PATH: `${VENV_BIN}:${process.env.PATH}`,
        PORT: String(port),
        DATABASE_BACKEND: "memory",
        AUTH_SECRET: TEST_AUTH_SECRET,
      },
      stdio: "ignore",
      detached: true,
    });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/health`);
      const connection = await Connection.open(port);
      try {
        connection.send(request("GET", "/health", {}));
        expect((await connection.response())?.status).toBe(200);
        await new Promise((idle) => setTimeout(idle, 6_000));
        expect(connection.closed, "the server closed the idle connection").toBe(false);
        connection.send(request("GET", "/health", {}));
        expect((await connection.response())?.status).toBe(200);
      } finally {
        connection.close();
      }
    } finally {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
