import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Command, Option } from "commander";
// Only the light modules load with the command line; the pipeline (SQLite, generators) loads when a
// healer command runs, so `charter forge ...` and `--help` stay quick.
import { HealerError } from "../../healer/errors.js";
import type { FixSummary, Healer } from "../../healer/index.js";
import { type ProjectPaths, projectFromPath } from "../../healer/project.js";
import { traceUrl } from "../../healer/trace-link.js";
import { PRIORITIES, type Priority, TICKET_STATUSES, type Ticket, type TicketStatus } from "../../healer/types.js";
import { formatOption, paint, UserError, useColor } from "../output.js";

interface ProjectOpts {
  project?: string | undefined;
  /** The PATH argument of `fix` and `serve`: a project root, `domains/` or one domain folder. */
  path?: string | undefined;
  /** `serve --no-regenerate`: leave runtime/ alone (`charter dev` regenerates itself). */
  regenerate?: boolean;
  format?: string;
}

function wantsJson(opts: ProjectOpts): boolean {
  return opts.format === "json";
}

function projectOption(): Option {
  return new Option(
    "--project <dir>",
    "project root, where .forge/ and runtime/ live (default: derived from PATH, else the current directory)",
  );
}

/** The project (src/healer/project.ts): `--project` when given, else the PATH argument, else the current directory. */
function projectOf(opts: ProjectOpts): ProjectPaths {
  const given = opts.project ?? opts.path ?? ".";
  if (!existsSync(given) || !statSync(given).isDirectory()) throw new UserError(`project directory not found: ${given}`);
  return projectFromPath(given);
}

/**
 * Opens the Healer of a project. With `--format json`, notification lines go to stderr so that
 * stdout holds only the JSON document.
 */
async function openHealer(opts: ProjectOpts, extraEnv: Record<string, string> = {}): Promise<Healer> {
  const project = projectOf(opts);
  const root = project.root;
  const json = wantsJson(opts);
  const { Healer } = await import("../../healer/pipeline/index.js");
  try {
    return new Healer({
      projectRoot: root,
      domainsDir: project.domainsDir,
      scanDir: project.scanDir,
      ...(opts.regenerate === false ? { regenerate: () => ({ files: 0, written: 0 }) } : {}),
      env: { ...projectEnv(root), ...extraEnv },
      console: (line) => (json ? process.stderr : process.stdout).write(`${line}\n`),
    });
  } catch (e) {
    if (e instanceof HealerError) throw new UserError(e.message);
    throw e;
  }
}

/**
 * The Healer and LLM settings of the project's `.env` (`SVC_HEALER_*`, `SVC_AI_*`, provider keys
 * and base URLs; the scaffold writes them there), so the CLI notifies and proposes the way the
 * project says; a variable set in the environment wins.
 */
/** The project's `.env` settings under the process environment; an empty variable does not hide the file's value. */
export function projectEnv(root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...projectEnvFile(join(root, ".env")) };
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && (v !== "" || !(k in env))) env[k] = v;
  return env;
}

function projectEnvFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m =
      /^\s*(?:export\s+)?(SVC_HEALER_[A-Z0-9_]*|HEALER_DATABASE_URL|SVC_AI_[A-Z0-9_]*|[A-Z]+_API_KEY|OPENAI_BASE_URL|OLLAMA_BASE_URL|LMSTUDIO_BASE_URL)\s*=\s*(.*?)\s*$/.exec(
        line,
      );
    if (!m) continue;
    const raw = m[2] as string;
    const value = /^(["']).*\1$/.test(raw) ? raw.slice(1, -1) : raw.replace(/\s+#.*$/, "");
    if (value !== "") out[m[1] as string] = value;
  }
  return out;
}

/** Runs an action with the Healer open, closing it (and waiting for webhooks) whatever happens. */
async function withHealer<T>(opts: ProjectOpts, fn: (h: Healer) => Promise<T> | T): Promise<T> {
  const healer = await openHealer(opts);
  try {
    return await fn(healer);
  } catch (e) {
    if (e instanceof HealerError) throw new UserError(e.message);
    throw e;
  } finally {
    await healer.close();
  }
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `charter healer ...`: the self-healing loop over a project's contracts. */
export function healerCommand(): Command {
  const healer = new Command("healer").description("turn contract and runtime errors into tickets and contract fixes").addHelpText(
    "after",
    `
State lives in the project root: .forge/healer/healer.db, .forge/healer/notifications.jsonl and
.forge/diffs/; regenerated code goes to runtime/. The root is --project, else derived from PATH (a
project root with domains/, domains/ itself, or one domain folder, whose parent is then the root and
which is the only folder written), else the current directory. With
HEALER_DATABASE_URL=postgres://... the tickets live in PostgreSQL instead (schema "healer", created on
first use), and several \`healer serve\` replicas share that one queue.

Notifications go to the console, the JSONL file and, when set, a webhook. Settings come from the
environment or the project's .env:
  SVC_HEALER_WEBHOOK_URL      address to POST each notification to (5 s timeout, failures logged)
  SVC_HEALER_WEBHOOK_FORMAT   json (the notification object) or text ({"text": ...} for chat tools);
                              default: text for hooks.slack.com-style chat addresses, json otherwise
  SVC_HEALER_WEBHOOK_SECRET   adds X-Charter-Timestamp and X-Charter-Signature-256:
                              sha256=<HMAC-SHA256 of "<timestamp>.<body>">
  SVC_HEALER_TOKEN            \`healer serve\`: required on every POST and ticket read (view pages:
                              sign in once); without it, only this machine reads and decides
  SVC_HEALER_LLM_CALLS_PER_MINUTE, SVC_HEALER_LLM_CALLS_PER_ERROR, SVC_HEALER_MAX_OPEN_PROPOSALS
                              model-call budgets (default 10, 2, 20); see docs/threat-model.md

Tier 1 fixes are applied at once. Tier 2 and 3 tickets get a fix proposed by the LLM provider the
environment selects (SVC_AI_MODEL=provider:model, or the first of ANTHROPIC_API_KEY, OPENAI_API_KEY,
GEMINI_API_KEY, GROQ_API_KEY, OPENROUTER_API_KEY, OLLAMA_BASE_URL, LMSTUDIO_BASE_URL; SVC_AI_TIMEOUT
in seconds, default 60); a person approves it. Without a provider they fail with a note saying so;
\`charter healer retry ID\` asks again once one is configured. \`charter doctor\` shows the choice.`,
  );

  healer
    .command("fix")
    .description("scan contracts (default domains/), file tickets for the errors, and process the queue")
    .argument("[path]", "project root, domains/ or one domain folder to scan (default: the project's domains/)")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (path: string | undefined, opts: ProjectOpts) => {
      if (path !== undefined && !existsSync(path)) throw new UserError(`path not found: ${path}`);
      await withHealer({ ...opts, path }, async (h) => {
        const target = path === undefined ? h.scanDir : projectFromPath(path).scanDir;
        if (!existsSync(target)) throw new UserError(`path not found: ${path ?? h.layout.domainsDir}`);
        const summary = await h.fix(target);
        if (wantsJson(opts)) printJson(summary);
        else printFix(summary);
        // A ticket that could not be fixed, or an error left with no fix waiting for approval, is a failed run.
        if (summary.failed > 0 || (summary.remainingErrors > 0 && summary.awaiting === 0)) process.exitCode = 1;
      });
    });

  healer
    .command("status")
    .description("queue counts per status, success rate per tier, recurring errors and recent resolutions")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (opts: ProjectOpts) => {
      await withHealer(opts, async (h) => {
        const s = await h.status();
        if (wantsJson(opts)) return printJson(s);
        const color = useColor();
        for (const st of TICKET_STATUSES) process.stdout.write(`${st.padEnd(10)} ${s.queue[st]}\n`);
        process.stdout.write(`${"total".padEnd(10)} ${s.total}\n`);
        const pct = (x: number): string => `${Math.round(x * 100)}%`;
        process.stdout.write(
          `\nsuccess rate: tier 1 ${pct(s.success_rate.tier_1)}, tier 2 ${pct(s.success_rate.tier_2)}, tier 3 ${pct(s.success_rate.tier_3)}\n`,
        );
        if (s.recurring.length) {
          process.stdout.write(`${paint("recurring errors", "bold", color)}\n`);
          for (const r of s.recurring)
            process.stdout.write(`  ${r.count}x ${r.contract_fqn || "(no contract)"} ${r.error_type || "unclassified"}\n`);
        }
        if (s.recent.length) {
          process.stdout.write(`${paint("recent resolutions", "bold", color)}\n`);
          for (const r of s.recent) process.stdout.write(`  ${r.id.slice(0, 8)} ${r.status.padEnd(8)} tier ${r.tier} ${r.fqn}\n`);
        }
      });
    });

  healer
    .command("tickets")
    .description("list tickets in queue order (priority, then oldest first)")
    .addOption(new Option("--status <status>", "only tickets in this status").choices([...TICKET_STATUSES]))
    .addOption(new Option("--priority <priority>", "only tickets of this priority").choices([...PRIORITIES]))
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (opts: ProjectOpts & { status?: TicketStatus; priority?: Priority }) => {
      await withHealer(opts, async (h) => {
        const list = await h.store.list({ status: opts.status, priority: opts.priority });
        if (wantsJson(opts)) return printJson(list);
        if (list.length === 0) return void process.stdout.write("no tickets\n");
        process.stdout.write(
          `${"ID".padEnd(8)}  ${"STATUS".padEnd(9)}  T  ${"PRIORITY".padEnd(8)}  ${"TYPE".padEnd(17)}  ${"SEEN".padStart(4)}  CONTRACT\n`,
        );
        for (const t of list) {
          process.stdout.write(
            `${t.id.slice(0, 8)}  ${t.status.padEnd(9)}  ${t.tier}  ${t.priority.padEnd(8)}  ${(t.error_type || "-").padEnd(17)}  ${String(t.occurrences).padStart(4)}  ${t.contract_fqn ?? "-"}\n`,
          );
        }
        process.stdout.write(`${list.length} ticket(s)\n`);
      });
    });

  healer
    .command("show")
    .description("show one ticket (full id or a prefix of at least 4 characters)")
    .argument("<id>", "ticket id or prefix")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (id: string, opts: ProjectOpts) => {
      await withHealer(opts, async (h) => {
        const t = await h.store.resolve(id);
        if (wantsJson(opts)) return printJson({ ...t, trace_url: traceUrl(t, h.env) });
        printTicket(t, h.env);
      });
    });

  healer
    .command("approve")
    .description("approve a proposed fix and apply it")
    .argument("<id>", "ticket id or prefix")
    .option("--accept-risk", "confirm the proposal's findings that destroy data or weaken a rule (listed by `healer show`)")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (id: string, opts: ProjectOpts & { acceptRisk?: boolean }) => {
      await withHealer(opts, async (h) => {
        const t = await h.approve(id, opts.acceptRisk === true ? true : []).catch((e: unknown) => {
          if (e instanceof HealerError && e.code === "risk_not_accepted")
            throw new HealerError(e.code, `${e.message}; read them with \`charter healer show ${id}\`, then approve with --accept-risk`);
          throw e;
        });
        if (wantsJson(opts)) printJson(t);
        else process.stdout.write(`ticket ${t.id.slice(0, 8)}: ${t.status}${t.resolution_note ? ` (${t.resolution_note})` : ""}\n`);
        if (t.status === "failed") process.exitCode = 1;
      });
    });

  healer
    .command("reject")
    .description("reject a proposed fix (or dismiss a queued ticket)")
    .argument("<id>", "ticket id or prefix")
    .option("--reason <text>", "why the fix is rejected (stored as the resolution note)")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (id: string, opts: ProjectOpts & { reason?: string }) => {
      await withHealer(opts, async (h) => {
        const t = await h.reject(id, opts.reason ?? "");
        if (wantsJson(opts)) printJson(t);
        else process.stdout.write(`ticket ${t.id.slice(0, 8)}: rejected (${t.resolution_note})\n`);
      });
    });

  healer
    .command("retry")
    .description("put a failed ticket back in the queue and process it again")
    .argument("<id>", "ticket id or prefix")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (id: string, opts: ProjectOpts) => {
      await withHealer(opts, async (h) => {
        const t = await h.retry(id);
        if (wantsJson(opts)) printJson(t);
        else process.stdout.write(`ticket ${t.id.slice(0, 8)}: ${t.status}${t.resolution_note ? ` (${t.resolution_note})` : ""}\n`);
      });
    });

  healer
    .command("history")
    .description("applied fixes from the diff store: date, contract, reason, number of changes")
    .addOption(projectOption())
    .addOption(formatOption())
    .action(async (opts: ProjectOpts) => {
      await withHealer(opts, (h) => {
        const records = h.history();
        if (wantsJson(opts)) {
          return printJson(
            records.map((r) => ({
              id: r.id,
              date: r.timestamp,
              contract: r.contract_fqn,
              reason: r.reason,
              changes: r.files.reduce((n, f) => n + f.changes.length, 0),
              files: r.files.map((f) => f.file),
              ticket_id: r.ticket_id,
              change_contract: r.change_contract,
            })),
          );
        }
        if (records.length === 0) return void process.stdout.write("no applied fixes yet\n");
        for (const r of records) {
          const n = r.files.reduce((k, f) => k + f.changes.length, 0);
          process.stdout.write(
            `${r.timestamp}  ${r.contract_fqn ?? "-"}  ${n} change(s)  ${r.change_contract.compatibility}  ${r.reason}\n`,
          );
        }
      });
    });

  healer
    .command("serve")
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

  return healer;
}

/** Runs the service until SIGINT or SIGTERM, then closes it and the store. */
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

async function serveHealer(h: Healer, host: string, port: number): Promise<void> {
  const { buildHealerServer } = await import("../../healer/server/app.js");
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

function printFix(s: FixSummary): void {
  const color = useColor();
  process.stdout.write(
    `\nScanned ${s.scanned}: ${s.contracts} contracts, ${s.errors} error(s), ${s.warnings} warning(s)\n` +
      `Tickets: ${s.tickets} (${s.newTickets} new)\n` +
      `Fixes applied: ${paint(String(s.applied), "green", color)}\n` +
      `Fixes awaiting approval: ${paint(String(s.awaiting), s.awaiting ? "yellow" : "green", color)}\n` +
      `Failed: ${paint(String(s.failed), s.failed ? "red" : "green", color)}\n` +
      `Errors remaining: ${s.remainingErrors}\n`,
  );
  if (s.regenerated > 0) process.stdout.write(`Regenerated files: ${s.regenerated}\n`);
}

function printTicket(t: Ticket, env: NodeJS.ProcessEnv): void {
  const line = (k: string, v: unknown): void => void process.stdout.write(`${k.padEnd(16)}${v}\n`);
  line("id", t.id);
  line("status", t.status);
  line("source", t.source);
  line("contract", t.contract_fqn ?? "-");
  line("error type", t.error_type || "-");
  line("tier", t.tier);
  line("priority", t.priority);
  line("fixable by", t.fixable_by);
  line("occurrences", `${t.occurrences} (last seen ${t.last_seen_at})`);
  line("created", t.created_at);
  if (t.resolved_at) line("resolved", t.resolved_at);
  if (t.resolution_note) line("note", t.resolution_note);
  if (t.diff_id) line("diff", t.diff_id);
  if (t.request_id) line("request id", t.request_id);
  if (t.trace_id) line("trace", traceUrl(t, env) ?? t.trace_id);
  line("error", t.raw_error);
  const ctx = Object.entries(t.context).filter(([, v]) => v !== undefined && v !== null && v !== "");
  if (ctx.length) {
    process.stdout.write("context\n");
    for (const [k, v] of ctx) process.stdout.write(`  ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}\n`);
  }
  const p = t.proposal;
  if (p) {
    process.stdout.write(`proposal        ${p.method}, confidence ${p.confidence}\n  ${p.explanation}\n`);
    for (const e of [{ file: p.file, changes: p.changes }, ...p.related]) {
      process.stdout.write(`  ${e.file}\n`);
      for (const c of e.changes) {
        const value = c.op === "remove" ? "(removed)" : JSON.stringify(c.value);
        process.stdout.write(
          `    ${c.op === "move" ? `${c.from} -> ` : ""}${c.path} = ${value}${c.before !== undefined ? ` (was ${JSON.stringify(c.before)})` : ""}\n`,
        );
      }
    }
  }
}
