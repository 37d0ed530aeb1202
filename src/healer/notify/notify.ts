import { createHmac } from "node:crypto";
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { redactSecrets } from "../intake/redact.js";
import type { Notification } from "../types.js";

/** How long a webhook may take before the notification counts as failed. */
export const WEBHOOK_TIMEOUT_MS = 5000;
/**
 * Header carrying `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">` when a webhook secret is
 * set; the timestamp (Unix seconds) is in `TIMESTAMP_HEADER`, so a receiver can refuse replays of
 * an old delivery (docs/threat-model.md).
 */
export const SIGNATURE_HEADER = "X-Charter-Signature-256";
export const TIMESTAMP_HEADER = "X-Charter-Timestamp";

/**
 * Webhook body format.
 * - `json`: the notification object itself (a raw JSON receiver).
 * - `text`: `{"text": "..."}`, what chat tools' incoming webhooks accept (Slack, Mattermost,
 *   Rocket.Chat, Google Chat; Discord through its `/slack` endpoint).
 * `auto` (the default) picks `text` for addresses of known chat hosts (hooks.slack.com,
 * chat.googleapis.com, discord.com/api/webhooks/.../slack, *.webhook.office.com) and `json`
 * otherwise. `SVC_HEALER_WEBHOOK_FORMAT=json|text` overrides the guess.
 */
export type WebhookFormat = "auto" | "json" | "text";

export interface NotifierOptions {
  /** `.forge/healer/notifications.jsonl`. */
  jsonlPath: string;
  webhookUrl?: string | undefined;
  webhookSecret?: string | undefined;
  webhookFormat?: WebhookFormat | undefined;
  timeoutMs?: number | undefined;
  /** Where console lines go; `null` silences the console channel. */
  console?: ((line: string) => void) | null;
  /** Where delivery problems are logged. */
  log?: (line: string) => void;
}

/**
 * Sends every notification to every channel: a console line, one JSON line in the file, and the
 * webhook. Console and file are synchronous and cheap; the webhook is fired without being awaited,
 * bounded by its timeout, and a failure is logged and dropped, so a slow or dead receiver costs the
 * pipeline nothing. `flush()` waits for deliveries still in flight (at most the timeout) before a
 * short-lived process exits.
 */
export class Notifier {
  private readonly pending = new Set<Promise<void>>();
  private readonly timeoutMs: number;
  private readonly format: "json" | "text";
  readonly sent: Notification[] = [];

  constructor(private readonly options: NotifierOptions) {
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.format = resolveFormat(options.webhookUrl, options.webhookFormat ?? "auto");
  }

  /** Reads `SVC_HEALER_WEBHOOK_URL`, `SVC_HEALER_WEBHOOK_SECRET` and `SVC_HEALER_WEBHOOK_FORMAT`. */
  static fromEnv(
    jsonlPath: string,
    env: NodeJS.ProcessEnv,
    rest: Omit<NotifierOptions, "jsonlPath" | "webhookUrl" | "webhookSecret"> = {},
  ): Notifier {
    const fmt = env.SVC_HEALER_WEBHOOK_FORMAT?.trim().toLowerCase();
    return new Notifier({
      jsonlPath,
      webhookUrl: env.SVC_HEALER_WEBHOOK_URL?.trim() || undefined,
      webhookSecret: env.SVC_HEALER_WEBHOOK_SECRET || undefined,
      ...rest,
      webhookFormat: rest.webhookFormat ?? (fmt === "json" || fmt === "text" ? fmt : "auto"),
    });
  }

  notify(raw: Notification): void {
    const n = { ...raw, message: redactSecrets(raw.message) };
    this.sent.push(n);
    const log = this.options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    if (this.options.console !== null) {
      const write = this.options.console ?? ((line: string) => process.stdout.write(`${line}\n`));
      write(consoleLine(n));
    }
    try {
      mkdirSync(dirname(this.options.jsonlPath), { recursive: true });
      // One write of one line with O_APPEND: concurrent writers never interleave inside a record.
      appendFileSync(this.options.jsonlPath, `${JSON.stringify(n)}\n`);
    } catch (e) {
      log(`[healer] could not append to ${this.options.jsonlPath}: ${(e as Error).message}`);
    }
    if (this.options.webhookUrl) {
      const p = this.deliver(this.options.webhookUrl, n).catch((e: unknown) => {
        log(`[healer] webhook delivery of ${n.event} for ${n.ticket_id.slice(0, 8)} failed: ${describeError(e)}`);
      });
      this.pending.add(p);
      void p.finally(() => this.pending.delete(p));
    }
  }

  /** Waits for webhook deliveries in flight; each ends by itself within the timeout. */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async deliver(url: string, n: Notification): Promise<void> {
    const body = JSON.stringify(this.format === "text" ? { text: chatText(n) } : n);
    const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "charter-healer" };
    if (this.options.webhookSecret) {
      const ts = String(Math.floor(Date.now() / 1000));
      headers[TIMESTAMP_HEADER] = ts;
      headers[SIGNATURE_HEADER] = signWebhook(this.options.webhookSecret, ts, body);
    }
    const controller = new AbortController();
    // The timer covers connecting, sending and reading the answer; `unref` so it never keeps a
    // process alive on its own (flush() is what waits).
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${this.timeoutMs} ms`)), this.timeoutMs);
    timer.unref();
    try {
      const res = await fetch(url, { method: "POST", headers, body, signal: controller.signal });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

function resolveFormat(url: string | undefined, format: WebhookFormat): "json" | "text" {
  if (format !== "auto") return format;
  if (!url) return "json";
  try {
    const u = new URL(url);
    const host = u.hostname.toLowerCase();
    if (host === "hooks.slack.com" || host === "chat.googleapis.com" || host.endsWith(".webhook.office.com")) return "text";
    if (/(^|\.)discord(app)?\.com$/.test(host) && u.pathname.endsWith("/slack")) return "text";
  } catch {
    // An invalid URL fails at delivery, where the error is logged.
  }
  return "json";
}

/** `sha256=<hex>` over `<timestamp>.<body>`: what a receiver recomputes, after checking the timestamp is recent. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** One console line; report text may carry terminal escape sequences, so control characters become `?`. */
export function consoleLine(n: Notification): string {
  const fqn = n.contract_fqn ? ` ${n.contract_fqn}` : "";
  return stripControl(`[healer:${n.event}] ${n.ticket_id.slice(0, 8)}${fqn} (tier ${n.tier}, ${n.priority}): ${n.message}`);
}

export function stripControl(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, "?");
}

/**
 * Chat text: the chat tools read `&`, `<` and `>` as markup (`<!channel>`, `<url|label>`), so they
 * are escaped as Slack documents; mentions such as `@here` are broken with a zero-width space;
 * the message stays on its own lines, control characters removed.
 */
export function chatText(n: Notification): string {
  const esc = (s: string): string =>
    stripControl(s)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/@(here|channel|everyone|all)\b/gi, "@\u200b$1");
  return `Charter Healer — ${n.event}: ${esc(n.contract_fqn || "(no contract)")} (ticket ${n.ticket_id.slice(0, 8)}, tier ${n.tier}, ${n.priority})\n${esc(n.message)}`;
}

function describeError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  if (e.name === "AbortError" || e.name === "TimeoutError") return cause instanceof Error ? cause.message : "timed out";
  return cause instanceof Error ? `${e.message} (${cause.message})` : e.message;
}
