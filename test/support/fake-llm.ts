import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { afterAll, beforeAll, beforeEach } from "vitest";

/** Every variable the LLM provider selection reads, emptied: a process given this sees no provider. */
export const NO_PROVIDER_ENV: Record<string, string> = {
  SVC_AI_MODEL: "",
  ANTHROPIC_API_KEY: "",
  OPENAI_API_KEY: "",
  OPENAI_BASE_URL: "",
  GEMINI_API_KEY: "",
  GROQ_API_KEY: "",
  OPENROUTER_API_KEY: "",
  OLLAMA_BASE_URL: "",
  LMSTUDIO_BASE_URL: "",
};

/**
 * What the fake answers to one chat completion request, in order of the queue:
 * - `{ json }`: a well-formed reply whose message content is `JSON.stringify(json)`;
 * - `{ content }`: a reply with exactly this message content (garbage, prose, a fenced block);
 * - `{ status, body }`: an HTTP error;
 * - `{ hang: true }`: never answers (until the client gives up or the fake closes).
 */
export type FakeReply =
  | { json: unknown }
  | { content: string }
  | { status: number; body?: unknown }
  | { hang: true }
  | { delayMs: number; json: unknown };

/** One request the fake received. */
export interface RecordedRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: ChatBody;
}

export interface ChatBody {
  model?: string;
  messages?: { role: string; content: string }[];
  response_format?: { type: string };
  tools?: unknown;
  [key: string]: unknown;
}

/**
 * A scripted OpenAI-compatible server on 127.0.0.1 (`POST /v1/chat/completions`). Each test
 * queues the replies it wants; the fake records every request so a test can look at the prompts.
 * An unexpected request (empty queue) gets a 500 naming the problem, so a test never hangs on it.
 */
export class FakeLlm {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeReply[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<FakeLlm> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const fake = new FakeLlm(server, typeof address === "object" && address ? address.port : 0);
    server.on("connection", (s) => {
      fake.sockets.add(s);
      s.on("close", () => fake.sockets.delete(s));
    });
    // A client that goes away mid-request (an app stopped while its agent waits) aborts the body read.
    server.on("request", (req, res) => void fake.handle(req, res).catch(() => res.destroy()));
    return fake;
  }

  /** Base URL of the OpenAI-compatible API (`.../v1`). */
  get baseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** The environment that makes Charter pick this fake (and nothing else). */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return { ...NO_PROVIDER_ENV, OPENAI_BASE_URL: this.baseURL, ...extra };
  }

  /** Queues replies, answered in order. */
  reply(...replies: FakeReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Replies still queued (a test can check that all were used). */
  get pending(): number {
    return this.queue.length;
  }

  /** Forgets queued replies and recorded requests (between tests sharing one fake). */
  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  /** The user message of the n-th request (prompts are what tests look at most). */
  userPrompt(n: number): string {
    return this.requests[n]?.body.messages?.find((m) => m.role === "user")?.content ?? "";
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: ChatBody = {};
    try {
      body = raw ? (JSON.parse(raw) as ChatBody) : {};
    } catch {
      body = { unparsable: raw };
    }
    const path = req.url ?? "";
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      return send(res, 404, { error: { message: `the fake serves POST /v1/chat/completions, not ${req.method} ${path}` } });
    }
    this.requests.push({ path, headers: req.headers, body });
    const next = this.queue.shift();
    if (!next) return send(res, 500, { error: { message: "fake LLM: no scripted reply left for this request" } });
    if ("hang" in next) {
      this.hanging.add(res);
      res.on("close", () => this.hanging.delete(res));
      return;
    }
    if ("status" in next) return send(res, next.status, next.body ?? { error: { message: `scripted HTTP ${next.status}` } });
    if ("delayMs" in next) await new Promise((r) => setTimeout(r, next.delayMs));
    const content = "content" in next ? next.content : JSON.stringify(next.json);
    send(res, 200, {
      id: `chatcmpl-fake-${this.requests.length}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? "fake",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    });
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/**
 * One fake for a test file: started before its tests, emptied before each, closed after all.
 * Returns a getter, since the fake exists only once `beforeAll` ran.
 */
export function useFakeLlm(): () => FakeLlm {
  let fake: FakeLlm | undefined;
  beforeAll(async () => {
    fake = await FakeLlm.start();
  });
  beforeEach(() => fake?.reset());
  afterAll(async () => {
    await fake?.close();
  });
  return () => {
    if (!fake) throw new Error("the fake LLM is not started yet (use it inside a test or hook)");
    return fake;
  };
}
