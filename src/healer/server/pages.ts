import { createTwoFilesPatch } from "diff";
import type { HealerStatus } from "../metrics.js";
import type { Change, Ticket } from "../types.js";
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
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:10px 24px}header a{color:#fff;text-decoration:none;font-weight:600}
main{max-width:1080px;margin:0 auto;padding:20px 24px}
h1{font-size:20px;margin:0 0 6px}h2{font-size:15px;margin:22px 0 8px}
.card{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:14px 16px;margin:12px 0}
pre{background:#0f1420;color:#e6e9ef;padding:10px 12px;border-radius:4px;overflow:auto;font-size:12px;white-space:pre-wrap;word-break:break-word}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:5px 8px;border-bottom:1px solid #eceff3;vertical-align:top}
th{font-weight:600;color:#4a5263;width:180px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;background:#e5e7eb;color:#374151}
.s-proposed{background:#fef3c7;color:#92400e}.s-applied{background:#d1fae5;color:#065f46}.s-failed{background:#fee2e2;color:#991b1b}
.s-rejected{background:#e5e7eb;color:#4b5563}.s-queued,.s-analyzing,.s-approved{background:#dbeafe;color:#1e40af}
.ok{color:#047857;font-weight:600}.bad{color:#b91c1c;font-weight:600}
.actions{display:flex;gap:16px;flex-wrap:wrap}.actions form{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px;flex:1;min-width:260px}
button{font:inherit;padding:6px 14px;border-radius:4px;border:1px solid transparent;cursor:pointer}
.approve{background:#047857;color:#fff}.reject{background:#b91c1c;color:#fff}
input[type=text],input[type=password]{font:inherit;width:100%;box-sizing:border-box;padding:5px 8px;margin:6px 0;border:1px solid #c8ced8;border-radius:4px}
.flash{background:#ecfdf5;border:1px solid #a7f3d0;padding:8px 12px;border-radius:4px}
.muted{color:#6b7280}
`;

/** The stylesheet is a constant of this file, not data: it goes in as it is. */
const STYLE_TAG = new SafeHtml(`<style>${STYLE}</style>`);

function layout(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title>${STYLE_TAG}</head>
<body><header><a href="/healer">Charter Healer</a></header><main>${body}</main></body></html>
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

/** `/healer/tickets/{id}/view`: everything a reviewer needs to approve or reject one ticket. */
export function ticketPage(t: Ticket, options: PageOptions): string {
  const p = t.proposal;
  const ctx = Object.entries(t.context).filter(([k, v]) => k !== "stacktrace" && v !== undefined && v !== null && v !== "");
  const stack = typeof t.context.stacktrace === "string" ? t.context.stacktrace : "";
  const tokenField = options.csrf ? html`<input type="hidden" name="csrf" value="${options.csrf}">` : "";
  const v = p?.verification;
  const proposal = p
    ? html`<h2>Proposed fix</h2>
<div class="card" id="proposal">
<table>
<tr><th>Method</th><td id="method">${p.method}</td></tr>
<tr><th>Confidence</th><td id="confidence">${p.confidence}</td></tr>
<tr><th>File</th><td><code>${p.file}</code></td></tr>
<tr><th>Explanation</th><td>${p.explanation}</td></tr>
${p.attempts ? html`<tr><th>LLM attempts</th><td>${p.attempts}</td></tr>` : ""}
<tr><th>Verification</th><td id="verification">${
        v
          ? html`<span class="${v.validates ? "ok" : "bad"}">${v.validates ? "domain validates" : "domain does not validate"}</span>,
<span class="${v.generates ? "ok" : "bad"}">${v.generates ? "every target generates" : "generation incomplete"}</span>
<span class="muted">(${v.targets.map((x) => `${x.target} ${x.ok ? `${x.files} files` : `failed: ${x.error ?? ""}`}`).join(", ")}; ${v.ms} ms)</span>
${v.errors.length ? html`<ul>${v.errors.map((e) => html`<li>${e}</li>`)}</ul>` : ""}`
          : html`<span class="muted">not verified</span>`
      }</td></tr>
</table>
<h2>Changes</h2>
<ul id="changes">${p.changes.map(changeLine)}</ul>
${p.related.map((r) => html`<p><code>${r.file}</code></p><ul>${r.changes.map(changeLine)}</ul>`)}
<details id="after"><summary>Proposed contract</summary><pre>${p.after}</pre></details>
<details id="diff"><summary>Diff</summary><pre>${createTwoFilesPatch(`a/${p.file}`, `b/${p.file}`, p.before, p.after, undefined, undefined, { context: 3 })}</pre></details>
</div>`
    : "";
  const actions =
    t.status === "proposed"
      ? html`<h2>Decision</h2>
<div class="actions">
<form method="post" action="/healer/approve/${t.id}/action" id="approve-form">
<p>Apply this change to the contract and regenerate the code.</p>${tokenField}
<button type="submit" class="approve" id="approve">Approve and apply</button>
</form>
<form method="post" action="/healer/reject/${t.id}/action" id="reject-form">
<label>Reason <input type="text" name="reason" id="reason" maxlength="2000"></label>${tokenField}
<button type="submit" class="reject" id="reject">Reject</button>
</form>
</div>`
      : "";
  const body = html`${options.flash ? html`<p class="flash" id="flash">${options.flash}</p>` : ""}
<h1>Ticket <code>${t.id}</code> ${badge(t.status)}</h1>
<p class="muted">${t.contract_fqn ?? "no contract"} &middot; tier ${t.tier} &middot; ${t.priority} &middot; ${t.error_type || "unclassified"} &middot; fixable by ${t.fixable_by}</p>
${t.resolution_note ? html`<div class="card" id="note"><strong>Note:</strong> ${t.resolution_note}</div>` : ""}
<h2>Error</h2>
<div class="card"><pre id="error">${t.raw_error}</pre>
<table>
<tr><th>Source</th><td>${t.source}</td></tr>
<tr><th>Occurrences</th><td id="occurrences">${t.occurrences}</td></tr>
<tr><th>First seen</th><td>${t.created_at}</td></tr>
<tr><th>Last seen</th><td>${t.last_seen_at}</td></tr>
${t.resolved_at ? html`<tr><th>Resolved</th><td>${t.resolved_at}</td></tr>` : ""}
${t.diff_id ? html`<tr><th>Diff record</th><td><code>${t.diff_id}</code></td></tr>` : ""}
</table></div>
${ctx.length ? html`<h2>Context</h2><div class="card"><table id="context">${ctx.map(([k, val]) => html`<tr><th>${k}</th><td><code>${json(val)}</code></td></tr>`)}</table></div>` : ""}
${stack ? html`<h2>Stack trace</h2><pre id="stacktrace">${stack}</pre>` : ""}
${proposal}
${actions}`;
  return layout(`Ticket ${t.id.slice(0, 8)} (${t.status})`, body);
}

/** `/healer`: the queue at a glance, newest activity first, each row linking to its view page. */
export function indexPage(tickets: readonly Ticket[], status: HealerStatus, waiting = 0): string {
  const counts = Object.entries(status.queue).map(([s, n]) => html`<span>${badge(s)} ${n}</span> `);
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  const rows = tickets.map(
    (t) =>
      html`<tr><td><a href="/healer/tickets/${t.id}/view"><code>${t.id.slice(0, 8)}</code></a></td><td>${badge(t.status)}</td><td>${t.tier}</td><td>${t.priority}</td><td>${t.error_type || "-"}</td><td>${t.contract_fqn ?? "-"}</td><td>${t.occurrences}</td><td>${t.raw_error.slice(0, 120)}</td></tr>`,
  );
  const body = html`<h1>Tickets</h1>
${waiting ? html`<p class="flash" id="waiting">${waiting} ticket(s) wait in the queue for the model-call budget; they are kept and processed as it frees up.</p>` : ""}
<div class="card">${counts} <span class="muted">&middot; success rate: tier 1 ${pct(status.success_rate.tier_1)}, tier 2 ${pct(status.success_rate.tier_2)}, tier 3 ${pct(status.success_rate.tier_3)}</span></div>
${
  tickets.length
    ? html`<div class="card"><table id="tickets"><tr><th>ID</th><th>Status</th><th>Tier</th><th>Priority</th><th>Type</th><th>Contract</th><th>Seen</th><th>Error</th></tr>${rows}</table></div>`
    : html`<p class="muted">No tickets yet.</p>`
}`;
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
