import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";

export interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are checked field by field in the tests.
  body: any;
  headers: Headers;
}

/** A tiny JSON client of the generated API, with an optional bearer token. */
export function client(base: string, token?: string) {
  const call = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...extra };
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = typeof body === "string" ? body : JSON.stringify(body);
    }
    const r = await fetch(`${base}${path}`, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
    const text = await r.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON (the docs page): keep the text.
    }
    return { status: r.status, body: parsed, headers: r.headers };
  };
  return {
    get: (path: string) => call("GET", path),
    post: (path: string, body?: unknown) => call("POST", path, body),
    patch: (path: string, body?: unknown) => call("PATCH", path, body),
    put: (path: string, body?: unknown) => call("PUT", path, body),
    delete: (path: string) => call("DELETE", path),
    call,
  };
}

export type Client = ReturnType<typeof client>;

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString("base64url");
}

/** An HS256 JWT signed with `secret`, for expired and forged tokens. */
export function signJwt(claims: Record<string, unknown>, secret: string): string {
  const head = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const body = b64url(JSON.stringify(claims));
  const sig = createHmac("sha256", secret).update(`${head}.${body}`).digest("base64url");
  return `${head}.${body}.${sig}`;
}

/** A fake Healer on 127.0.0.1 recording every POSTed JSON body. */
export async function startFakeHealer(): Promise<{ url: string; received: Record<string, unknown>[]; close(): Promise<void> }> {
  const received: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    let data = "";
    req.on("data", (c: Buffer) => {
      data += c.toString();
    });
    req.on("end", () => {
      if (req.method === "POST") received.push({ path: req.url, ...(JSON.parse(data || "{}") as Record<string, unknown>) });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ticket_id: "t1", status: "proposed" }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export async function eventually<T>(fn: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}
