import { Command } from "commander";
import { approveCommand } from "./approve.js";
import { fixCommand } from "./fix.js";
import { historyCommand } from "./history.js";
import { rejectCommand } from "./reject.js";
import { retryCommand } from "./retry.js";
import { serveCommand } from "./serve.js";
import { showCommand } from "./show.js";
import { statusCommand } from "./status.js";
import { ticketsCommand } from "./tickets.js";

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
  healer.addCommand(fixCommand());
  healer.addCommand(statusCommand());
  healer.addCommand(ticketsCommand());
  healer.addCommand(showCommand());
  healer.addCommand(approveCommand());
  healer.addCommand(rejectCommand());
  healer.addCommand(retryCommand());
  healer.addCommand(historyCommand());
  healer.addCommand(serveCommand());
  return healer;
}
