import { createTwoFilesPatch } from "diff";
import type { HealerStatus } from "../notify/metrics.js";
import { needsConfirmation, type RiskFinding } from "../proposal/risk.js";
import type { Change, ProposalPlan, Ticket, Verification } from "../types.js";
import { html, SafeHtml } from "./html.js";

/** What a page needs to know about the request beyond the ticket. */
export interface PageOptions {
  /**
   * With a token set, the session's CSRF token: the forms carry it as a hidden field (the session
   * cookie alone is never enough for a write).
   */
  csrf?: string | undefined;
  /** One-line message after a form action (`?done=approved`). */
  flash?: string | undefined;
  /** Hidden fields every form of the page carries (name -> value), as `hiddenFields` renders them. */
  hidden?: Readonly<Record<string, string>> | undefined;
  /** When the fix of an applied ticket went live in the running app (`.forge/live.json`, written by `charter dev`). */
  liveSince?: string | undefined;
  /** The ticket's trace in the tracing tool (`traceUrl`, from SVC_HEALER_TRACE_URL). */
  traceUrl?: string | null | undefined;
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:10px 24px}header a{color:#fff;text-decoration:none;font-weight:600}
main{max-width:1080px;margin:0 auto;padding:20px 24px}
h1{font-size:20px;margin:0 0 6px}h2{font-size:16px;margin:24px 0 8px}h3{font-size:14px;margin:14px 0 6px}
.card{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:14px 16px;margin:12px 0}
pre{background:#0f1420;color:#e6e9ef;padding:10px 12px;border-radius:4px;overflow:auto;font-size:12px;white-space:pre-wrap;word-break:break-word}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:5px 8px;border-bottom:1px solid #eceff3;vertical-align:top}
th{font-weight:600;color:#374151;width:180px}thead th{width:auto}caption{text-align:left;padding:0 0 6px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;background:#e5e7eb;color:#374151}
.s-proposed{background:#fef3c7;color:#92400e}.s-applied{background:#d1fae5;color:#065f46}.s-failed{background:#fee2e2;color:#991b1b}
.s-rejected{background:#e5e7eb;color:#374151}.s-queued,.s-analyzing,.s-approved{background:#dbeafe;color:#1e40af}
.ok{color:#047857;font-weight:600}.bad{color:#b91c1c;font-weight:600}
.actions{display:flex;gap:16px;flex-wrap:wrap}.actions form{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px;flex:1;min-width:260px}
button{font:inherit;padding:6px 14px;border-radius:4px;border:1px solid transparent;cursor:pointer}
.approve{background:#047857;color:#fff}.reject{background:#b91c1c;color:#fff}
label{display:block;font-weight:600}
input[type=text],input[type=password]{font:inherit;font-weight:400;width:100%;box-sizing:border-box;padding:5px 8px;margin:6px 0;border:1px solid #6b7280;border-radius:4px}
a:focus-visible,button:focus-visible,input:focus-visible,summary:focus-visible,pre:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
.skip{position:absolute;left:8px;top:-40px;background:#fff;color:#1d2330;padding:6px 10px;border-radius:4px;z-index:1}
.skip:focus{top:8px}
.flash{background:#eff6ff;border:1px solid #93c5fd;padding:8px 12px;border-radius:4px;font-weight:600}
summary{cursor:pointer;font-weight:600;padding:4px 0}
.diff .add{color:#86efac}.diff .del{color:#fca5a5}.diff .hunk{color:#93c5fd}
.muted{color:#4b5563}
`;

/** The stylesheet is a constant of this file, not data: it goes in as it is. */
const STYLE_TAG = new SafeHtml(`<style>${STYLE}</style>`);

/** `skipTo`: the id the skip link jumps to, past the header to what the page is for. */
function layout(title: string, body: SafeHtml, skipTo = "content"): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title>${STYLE_TAG}</head>
<body><a class="skip" href="#${skipTo}">Skip to ${skipTo === "decision" ? "the decision" : "the content"}</a>
<header><a href="/healer">Charter Healer</a></header><main id="content">${body}</main></body></html>
`.value;
}

function badge(status: string): SafeHtml {
  return html`<span class="badge s-${status}">${status}</span>`;
}

function json(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function changeLine(c: Change): SafeHtml {
  const value = c.op === "remove" ? "(removed)" : json(c.value);
  const from = c.op === "move" ? html`<code>${c.from}</code> &rarr; ` : "";
  const before = c.before !== undefined ? html` <span class="muted">(was <code>${json(c.before)}</code>)</span>` : "";
  return html`<li>${from}<code>${c.path} = ${value}</code>${before}</li>`;
}

/**
 * The hidden fields of every form on a page, in one place: whatever guards a form action (a CSRF
 * token, say) is added here once and reaches every form.
 */
export function hiddenFields(options: PageOptions): SafeHtml {
  return html`${Object.entries(options.hidden ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`;
}

/** The fields a form needs besides its own: the hidden ones, with the session's CSRF token when a token guards the Healer. */
function formFields(options: PageOptions): SafeHtml {
  return hiddenFields({ ...options, hidden: { ...options.hidden, ...(options.csrf ? { csrf: options.csrf } : {}) } });
}

/** A unified diff with its added, removed and hunk lines marked (colour is never the only cue: the +/- stay). */
function diffBlock(file: string, before: string, after: string): SafeHtml {
  const patch = createTwoFilesPatch(`a/${file}`, `b/${file}`, before, after, undefined, undefined, { context: 3 }).trimEnd();
  const lines = patch
    .split("\n")
    .filter((l) => !l.startsWith("====="))
    .map((l) => {
      const cls = l.startsWith("@@")
        ? "hunk"
        : l.startsWith("+") && !l.startsWith("+++")
          ? "add"
          : l.startsWith("-") && !l.startsWith("---")
            ? "del"
            : "";
      return cls ? html`<span class="${cls}">${l}</span>\n` : html`${l}\n`;
    });
  return html`<pre class="diff" tabindex="0" aria-label="Diff of ${file}">${lines}</pre>`;
}

function verificationLine(v: Verification | undefined): SafeHtml {
  if (!v) return html`<span class="muted">not verified</span>`;
  const targets = v.targets.map((x) => `${x.target} ${x.ok ? `${x.files} files` : `failed: ${x.error ?? ""}`}`).join(", ");
  return html`<span class="${v.validates ? "ok" : "bad"}">${v.validates ? "domain validates" : "domain does not validate"}</span>,
<span class="${v.generates ? "ok" : "bad"}">${v.generates ? "every target generates" : "generation incomplete"}</span>
<span class="muted">(${targets}; ${v.ms} ms)</span>
${v.errors.length ? html`<ul>${v.errors.map((e) => html`<li>${e}</li>`)}</ul>` : ""}`;
}

/**
 * What `charter plan` says approving regenerates: a summary line, then (collapsed) the files, the
 * migration's SQL and the API changes the consequences list sums up.
 */
function planCell(pp: ProposalPlan | undefined): SafeHtml {
  if (!pp) return html`<span class="muted">not planned</span>`;
  const p = pp.plan;
  if (!p) return html`<span class="bad">not planned: ${pp.error ?? "unknown reason"}</span>`;
  const against = pp.compared_with === "runtime" ? html`against <code>${p.output}</code>` : html`against the current contracts' output`;
  const files = [
    ...p.added.map((f) => `+ ${f.path} (${f.added} lines)`),
    ...p.changed.map((f) => `~ ${f.path} (+${f.added} -${f.removed})`),
    ...p.removed.map((f) => `- ${f}`),
    ...p.kept.map((k) => `= ${k.path} kept (${k.reason})`),
  ];
  const api = p.api
    ? p.api.changes.map((c) => `${c.level === "error" ? "BREAKING" : c.level}: ${c.operation}: ${c.text} [${c.id}]`)
    : [`not compared: ${p.apiError ?? "no FastAPI backend"}`];
  return html`${p.added.length} added, ${p.changed.length} changed, ${p.removed.length} removed ${against}${
    p.migration ? html`; migration <code>${p.migration.file}</code> with ${p.migration.destructive.length} destructive step(s)` : ""
  }${pp.rows_unknown ? html`; rows unknown: ${pp.rows_unknown}` : ""}${p.api?.breaking ? html`; <strong>breaking API change</strong>` : ""}
<details id="plan-details"><summary>Files, migration and API</summary>
<pre tabindex="0" aria-label="Files">${files.join("\n")}</pre>
${pp.migration_sql ? html`<pre tabindex="0" aria-label="Migration">${pp.migration_sql}</pre>` : ""}
<pre tabindex="0" aria-label="API changes">${api.join("\n") || "no API change"}</pre>
</details>`;
}

/**
 * What approving does, before anything else of the proposal: one line per risk finding, most
 * severe first, with where it happens in the proposed contract.
 */
function consequencesBlock(risk: readonly RiskFinding[] | undefined): SafeHtml {
  const items = risk ?? [];
  return html`<section id="consequences" aria-labelledby="consequences-h">
<h2 id="consequences-h">What approving does</h2>
${
  items.length === 0
    ? html`<p class="muted">No weakened rule, removed data or client-breaking change found in the proposed contract or its plan.</p>`
    : html`<ul class="consequences">${items.map(
        (f) =>
          html`<li class="risk" data-level="${f.level}" data-id="${f.id}"><strong>${f.level}</strong>: ${f.message} <span class="muted">(<code>${f.file}:${f.line}:${f.column}</code>)</span></li>`,
      )}</ul>`
}
</section>`;
}

/** One required checkbox per finding that must be confirmed by name; the server checks them again. */
function riskChecks(risk: readonly RiskFinding[] | undefined): SafeHtml {
  const need = needsConfirmation(risk ?? []);
  if (need.length === 0) return html``;
  return html`<fieldset id="accept-risk"><legend>Confirm each consequence to approve</legend>
${need.map(
  (f, i) =>
    html`<div><input type="checkbox" name="accept_risk" value="${f.id}" id="accept-${i}" required><label for="accept-${i}">I accept: ${f.level}: ${f.message}</label></div>`,
)}</fieldset>`;
}

/**
 * `/healer/tickets/{id}/view`, in the order a reviewer works: what to decide (the forms, the
 * verification, the proposal's summary) and the diff first; then the error it answers; the stack
 * trace and the full proposed contract last, collapsed. The skip link jumps to the decision.
 */
/** The owner's "ask again" on a failed or rejected ticket (a repeat of the error alone asks again only after a change). */
function retryForm(t: Ticket, options: PageOptions): SafeHtml {
  return html`<div class="actions">
<form method="post" action="/healer/retry/${t.id}/action" id="retry-form" aria-labelledby="retry">
<p>Put this ticket back in the queue and ask for a fix again, with the model and contracts as they are now.</p>${formFields(options)}
<button type="submit" id="retry">Retry</button>
</form>
</div>`;
}

export function ticketPage(t: Ticket, options: PageOptions): string {
  const p = t.proposal;
  const ctx = Object.entries(t.context).filter(([k, v]) => k !== "stacktrace" && v !== undefined && v !== null && v !== "");
  const stack = typeof t.context.stacktrace === "string" ? t.context.stacktrace : "";
  const forms =
    t.status === "proposed"
      ? html`<div class="actions">
<form method="post" action="/healer/approve/${t.id}/action" id="approve-form" aria-labelledby="approve">
<p>Apply this change to the contract and regenerate the code.</p>${riskChecks(p?.risk)}${formFields(options)}
<button type="submit" class="approve" id="approve">Approve and apply</button>
</form>
<form method="post" action="/healer/reject/${t.id}/action" id="reject-form" aria-labelledby="reject">
<label for="reason">Reason for rejecting (optional)</label><input type="text" name="reason" id="reason" maxlength="2000">${formFields(options)}
<button type="submit" class="reject" id="reject">Reject</button>
</form>
</div>`
      : t.status === "failed" || t.status === "rejected"
        ? retryForm(t, options)
        : "";
  const decision = p
    ? html`${consequencesBlock(p.risk)}<section id="decision" tabindex="-1" aria-labelledby="decision-h">
<h2 id="decision-h">${t.status === "proposed" ? "Decision" : "Proposed fix"}</h2>
<div class="card" id="proposal">
<table>
<tr><th scope="row">Explanation</th><td>${p.explanation}</td></tr>
<tr><th scope="row">Verification</th><td id="verification">${verificationLine(p.verification)}</td></tr>
<tr><th scope="row">Plan</th><td id="plan">${planCell(p.plan)}</td></tr>
<tr><th scope="row">Method</th><td id="method">${p.method}</td></tr>
<tr><th scope="row">Confidence</th><td id="confidence">${p.confidence}</td></tr>
${p.attempts ? html`<tr><th scope="row">LLM attempts</th><td>${p.attempts}</td></tr>` : ""}
</table>
</div>
${forms}
</section>
<section id="diff" aria-labelledby="diff-h">
<h2 id="diff-h">Diff of <code>${p.file}</code></h2>
${diffBlock(p.file, p.before, p.after)}
${p.related.map((r) => html`<h3>Also changed: <code>${r.file}</code></h3>${diffBlock(r.file, r.before, r.after)}`)}
<h3>Changes</h3>
<ul id="changes">${p.changes.map(changeLine)}</ul>
${p.related.map((r) => html`<p><code>${r.file}</code></p><ul>${r.changes.map(changeLine)}</ul>`)}
</section>`
    : html`<section id="decision" tabindex="-1" aria-labelledby="decision-h"><h2 id="decision-h">Decision</h2>
<p class="muted">No proposal${t.status === "queued" || t.status === "analyzing" ? " yet" : ""}: nothing to decide.</p>${forms}</section>`;
  const details = html`${
    stack
      ? html`<details id="trace"><summary>Stack trace</summary><pre id="stacktrace" tabindex="0" aria-label="Stack trace">${stack}</pre></details>`
      : ""
  }
${p ? html`<details id="after"><summary>Full proposed contract <code>${p.file}</code></summary><pre tabindex="0" aria-label="Proposed contract">${p.after}</pre></details>` : ""}`;
  const body = html`${options.flash ? html`<p class="flash" id="flash" role="status">${options.flash}</p>` : ""}
<h1>Ticket <code>${t.id}</code> ${badge(t.status)}</h1>
${t.regressed_at ? html`<p class="flash" id="regression" role="status">Regression: this error came back on ${t.regressed_at} after its fix was applied; the ticket was reopened.</p>` : ""}
<p class="muted">${t.contract_fqn ?? "no contract"} &middot; tier ${t.tier} &middot; ${t.priority} &middot; ${t.error_type || "unclassified"} &middot; fixable by ${t.fixable_by}</p>
${t.resolution_note ? html`<div class="card" id="note"><strong>Note:</strong> ${t.resolution_note}</div>` : ""}
${liveLine(t, options.liveSince)}
${decision}
<section id="error-section" aria-labelledby="error-h">
<h2 id="error-h">Error</h2>
<div class="card"><pre id="error" tabindex="0" aria-label="Error message">${t.raw_error}</pre>
<table>
<tr><th scope="row">Source</th><td>${t.source}</td></tr>
<tr><th scope="row">Occurrences</th><td id="occurrences">${t.occurrences}</td></tr>
<tr><th scope="row">First seen</th><td>${t.created_at}</td></tr>
<tr><th scope="row">Last seen</th><td>${t.last_seen_at}</td></tr>
${t.resolved_at ? html`<tr><th scope="row">Resolved</th><td>${t.resolved_at}</td></tr>` : ""}
${t.diff_id ? html`<tr><th scope="row">Diff record</th><td><code>${t.diff_id}</code></td></tr>` : ""}
${t.request_id ? html`<tr><th scope="row">Request id</th><td><code id="request-id">${t.request_id}</code></td></tr>` : ""}
${traceRow(t, options.traceUrl)}
</table>
${ctx.length ? html`<h3>Context</h3><table id="context">${ctx.map(([k, val]) => html`<tr><th scope="row">${k}</th><td><code>${json(val)}</code></td></tr>`)}</table>` : ""}
</div>
</section>
${details}`;
  return layout(`Ticket ${t.id.slice(0, 8)} (${t.status})`, body, "decision");
}

/** The failed request's trace id, linked to the tracing tool when SVC_HEALER_TRACE_URL is set. */
function traceRow(t: Ticket, url: string | null | undefined): SafeHtml | string {
  if (!t.trace_id) return "";
  const id = html`<code id="trace-id">${t.trace_id}</code>`;
  return html`<tr><th scope="row">Trace</th><td>${url ? html`<a id="trace-link" href="${url}" rel="noreferrer">${id}</a>` : id}</td></tr>`;
}

/** Whether the running app serves the applied fix yet (`charter dev` records it in `.forge/live.json`). */
function liveLine(t: Ticket, liveSince: string | undefined): SafeHtml | string {
  if (t.status !== "applied" || !t.diff_id) return "";
  return liveSince
    ? html`<p class="flash" id="live" role="status">The new code is live since ${liveSince}.</p>`
    : html`<p class="muted" id="live">Not live yet: the running app has not been restarted on this fix.</p>`;
}

function ticketRows(tickets: readonly Ticket[]): SafeHtml[] {
  return tickets.map(
    (t) =>
      html`<tr><td><a href="/healer/tickets/${t.id}/view"><code>${t.id.slice(0, 8)}</code></a></td><td>${badge(t.status)}</td><td>${t.tier}</td><td>${t.priority}</td><td>${t.error_type || "-"}</td><td>${t.contract_fqn ?? "-"}</td><td>${t.occurrences}</td><td>${t.raw_error.slice(0, 120)}</td></tr>`,
  );
}

function ticketTable(id: string, caption: string, tickets: readonly Ticket[]): SafeHtml {
  return html`<div class="card"><table id="${id}"><caption class="muted">${caption}</caption>
<thead><tr><th scope="col">ID</th><th scope="col">Status</th><th scope="col">Tier</th><th scope="col">Priority</th><th scope="col">Type</th><th scope="col">Contract</th><th scope="col">Seen</th><th scope="col">Error</th></tr></thead>
<tbody>${ticketRows(tickets)}</tbody></table></div>`;
}

/**
 * `/healer`: what waits for a decision first (proposed tickets, each linking to its view page),
 * then the whole queue, newest activity first.
 */
export function indexPage(tickets: readonly Ticket[], status: HealerStatus, budgetWaiting = 0): string {
  const counts = Object.entries(status.queue).map(([s, n]) => html`<span>${badge(s)} ${n}</span> `);
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  const waiting = tickets.filter((t) => t.status === "proposed");
  const body = html`<h1>Tickets</h1>
${budgetWaiting ? html`<p class="flash" id="budget-waiting">${budgetWaiting} ticket(s) wait in the queue for the model-call budget; they are kept and processed as it frees up.</p>` : ""}
<div class="card">${counts} <span class="muted">&middot; success rate: tier 1 ${pct(status.success_rate.tier_1)}, tier 2 ${pct(status.success_rate.tier_2)}, tier 3 ${pct(status.success_rate.tier_3)}</span></div>
<section aria-labelledby="waiting-h"><h2 id="waiting-h">Waiting for a decision (${waiting.length})</h2>
${
  waiting.length
    ? ticketTable(
        "waiting",
        "Proposed fixes to approve or reject, highest priority first",
        [...waiting].sort((a, b) => a.priority_order - b.priority_order),
      )
    : html`<p class="muted">Nothing waits for a decision.</p>`
}
</section>
<section aria-labelledby="all-h"><h2 id="all-h">All tickets</h2>
${tickets.length ? ticketTable("tickets", "Every ticket, newest activity first", tickets) : html`<p class="muted">No tickets yet.</p>`}
</section>`;
  return layout("Charter Healer", body);
}

/** `/healer/login`: the token, once; the answer sets the session cookie the view pages use. */
export function loginPage(next: string, error?: string): string {
  const body = html`<h1>Sign in</h1>
${error ? html`<p class="flash" id="login-error">${error}</p>` : ""}
<form method="post" action="/healer/login" class="card" id="login-form">
<label>Healer token (SVC_HEALER_TOKEN) <input type="password" name="token" autocomplete="off" required></label>
<input type="hidden" name="next" value="${next}">
<button type="submit" class="approve" id="login">Sign in</button>
</form>`;
  return layout("Charter Healer: sign in", body);
}
