import { LineCounter, parse, parseDocument } from "yaml";
import { toPointer } from "../../contracts/findings.js";
import { locate } from "../../contracts/locate.js";
import { asRecord as obj } from "../../contracts/unchecked.js";

/**
 * The contract risk review: what a proposed contract means compared with the one it replaces,
 * judged by meaning (a rule gone, a field made writable, a transition added) rather than by key
 * name (budget.ts keeps that older guard for secrets and users). Pure: two contracts in, findings
 * out, each located in the proposed contract so the reviewer sees where it happens.
 */

export const RISK_LEVELS = ["destroys data", "breaks clients", "weakens", "info"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

export interface RiskFinding {
  /** Stable name of the finding (rule and JSON Pointer): what a reviewer confirms when approving. */
  id: string;
  level: RiskLevel;
  message: string;
  /** Project-relative file of the proposed contract. */
  file: string;
  line: number;
  column: number;
  /** JSON Pointer into the proposed contract (the nearest node that still exists for a removal). */
  path: string;
}

/** Levels that need a second, explicit confirmation naming the finding before approval. */
export const CONFIRM_LEVELS: readonly RiskLevel[] = ["destroys data", "breaks clients", "weakens"];

export function needsConfirmation(findings: readonly RiskFinding[]): RiskFinding[] {
  return findings.filter((f) => CONFIRM_LEVELS.includes(f.level));
}

type Obj = Record<string, unknown>;
/** `subject` tells apart findings of one rule at one place (two fields made writable in one list). */
type Raw = { rule: string; level: RiskLevel; message: string; path: (string | number)[]; subject?: string };

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strings = (v: unknown): string[] => list(v).map(String);
const code = (v: unknown): string => `\`${typeof v === "string" ? v : JSON.stringify(v)}\``;

/**
 * Reviews `after` (the proposed contract data, whose text is `afterSource` in `file`) against
 * `before`. Findings are sorted by level (data loss first), then by position.
 */
export function reviewContractRisk(before: Obj, after: Obj, file: string, afterSource: string): RiskFinding[] {
  const kind = String(after.kind ?? before.kind ?? "").toLowerCase();
  const name = String(obj(after.metadata).name ?? obj(before.metadata).name ?? "");
  const b = obj(before.spec);
  const a = obj(after.spec);
  const raw: Raw[] = [];
  if (kind === "entity" || kind === "mixin") entityRules(name, b, a, raw);
  if (kind === "route") routeRules(b, a, raw);
  if (kind === "workflow") workflowRules(b, a, raw);
  if (kind === "agent") agentRules(b, a, raw);
  const lineCounter = new LineCounter();
  const doc = parseDocument(afterSource, { lineCounter });
  const out = raw.map((r): RiskFinding => {
    const path = ["spec", ...r.path];
    const pos = locate(doc, lineCounter, path);
    const pointer = toPointer(deepestExisting(after, path));
    return {
      id: `${r.rule}:${toPointer(path)}${r.subject ? `#${r.subject}` : ""}`,
      level: r.level,
      message: r.message,
      file,
      line: pos.line,
      column: pos.column,
      path: pointer,
    };
  });
  const seen = new Set<string>();
  return out
    .filter((f) => !seen.has(f.id) && seen.add(f.id))
    .sort((x, y) => RISK_LEVELS.indexOf(x.level) - RISK_LEVELS.indexOf(y.level) || x.line - y.line || x.column - y.column);
}

/** The part of `path` that exists in `data`: a removed key is located at its parent. */
function deepestExisting(data: unknown, path: readonly (string | number)[]): (string | number)[] {
  const out: (string | number)[] = [];
  let node = data;
  for (const seg of path) {
    if (Array.isArray(node) && Number(seg) < node.length) node = node[Number(seg)];
    else if (node !== null && typeof node === "object" && !Array.isArray(node) && String(seg) in (node as Obj))
      node = (node as Obj)[String(seg)];
    else break;
    out.push(seg);
  }
  return out;
}

// ---- entities (and mixins, which lend their fields to entities) ------------------------------

/** Constraint keys where a smaller value is looser (lower bounds) or a larger one (upper bounds). */
const LOWER_BOUNDS = new Set(["min", "minLength", "minItems", "exclusiveMinimum"]);
const UPPER_BOUNDS = new Set(["max", "maxLength", "maxItems", "exclusiveMaximum"]);

function entityRules(entity: string, b: Obj, a: Obj, out: Raw[]): void {
  const bf = obj(b.fields);
  const af = obj(a.fields);
  for (const [field, oldDef] of Object.entries(bf)) {
    const at = ["fields", field];
    if (!(field in af)) {
      out.push({
        rule: "field.removed",
        level: "destroys data",
        message: `removes field \`${entity}.${field}\`: its column and the data in it are dropped`,
        path: at,
      });
      continue;
    }
    const o = obj(oldDef);
    const n = obj(af[field]);
    const f = `\`${entity}.${field}\``;
    if (o.type !== undefined && n.type !== undefined && o.type !== n.type)
      out.push({
        rule: "field.type",
        level: "breaks clients",
        message: `changes the type of ${f} from ${code(o.type)} to ${code(n.type)}`,
        path: [...at, "type"],
      });
    if (o.required === true && n.required !== true)
      out.push({ rule: "field.required", level: "weakens", message: `makes ${f} optional (it was required)`, path: [...at, "required"] });
    if (o.immutable === true && n.immutable !== true)
      out.push({
        rule: "field.immutable",
        level: "weakens",
        message: `makes ${f} changeable after creation (it was immutable)`,
        path: [...at, "immutable"],
      });
    if (o.computed !== undefined && n.computed === undefined)
      out.push({
        rule: "field.computed",
        level: "weakens",
        message: `makes ${f} writable by clients (it was computed: ${code(o.computed)})`,
        path: [...at, "computed"],
      });
    if (o.unique === true && n.unique !== true)
      out.push({ rule: "field.unique", level: "weakens", message: `drops the uniqueness of ${f}`, path: [...at, "unique"] });
    if (o.format !== undefined && n.format !== o.format)
      out.push({
        rule: "field.format",
        level: "weakens",
        message: `removes the format ${code(o.format)} of ${f}`,
        path: [...at, "format"],
      });
    constraintRules(f, obj(o.constraints), n.constraints, [...at, "constraints"], out);
    enumRules(f, o.enum, n.enum, [...at, "enum"], out);
    referenceRules(f, o.references, n.references, [...at, "references"], out);
  }
}

function constraintRules(f: string, old: Obj, next: unknown, at: string[], out: Raw[]): void {
  if (Object.keys(old).length === 0) return;
  const n = obj(next);
  if (next === undefined) {
    const what = Object.entries(old)
      .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
      .join(", ");
    out.push({ rule: "field.constraints", level: "weakens", message: `removes every constraint of ${f} (${what})`, path: at });
    return;
  }
  for (const [k, v] of Object.entries(old)) {
    const w = n[k];
    const p = [...at, k];
    if (w === undefined)
      out.push({
        rule: "constraint.removed",
        level: "weakens",
        message: `removes the constraint ${k} ${JSON.stringify(v)} of ${f}`,
        path: p,
      });
    else if (typeof v === "number" && typeof w === "number" && ((LOWER_BOUNDS.has(k) && w < v) || (UPPER_BOUNDS.has(k) && w > v)))
      out.push({ rule: "constraint.loosened", level: "weakens", message: `loosens ${k} of ${f} from ${v} to ${w}`, path: p });
    else if (typeof v !== "number" && JSON.stringify(v) !== JSON.stringify(w))
      out.push({
        rule: "constraint.changed",
        level: "weakens",
        message: `changes the constraint ${k} of ${f} from ${JSON.stringify(v)} to ${JSON.stringify(w)}`,
        path: p,
      });
  }
}

function enumRules(f: string, old: unknown, next: unknown, at: string[], out: Raw[]): void {
  if (!Array.isArray(old)) return;
  if (!Array.isArray(next)) {
    out.push({
      rule: "enum.removed",
      level: "weakens",
      message: `removes the allowed values of ${f} (${old.map(String).join(", ")}): any value is accepted`,
      path: at,
    });
    return;
  }
  const added = next.filter((v) => !old.includes(v));
  const gone = old.filter((v) => !next.includes(v));
  if (added.length)
    out.push({ rule: "enum.widened", level: "weakens", message: `adds the value(s) ${added.map(code).join(", ")} to ${f}`, path: at });
  if (gone.length)
    out.push({
      rule: "enum.narrowed",
      level: "breaks clients",
      message: `removes the value(s) ${gone.map(code).join(", ")} from ${f}: stored rows and clients may still use them`,
      path: at,
    });
}

function referenceRules(f: string, old: unknown, next: unknown, at: string[], out: Raw[]): void {
  if (old === undefined) return;
  const o = obj(old);
  if (next === undefined) {
    out.push({
      rule: "reference.removed",
      level: "weakens",
      message: `drops the reference of ${f} to ${code(o.entity)} (no foreign key any more)`,
      path: at,
    });
    return;
  }
  const n = obj(next);
  const was = String(o.on_delete ?? "restrict");
  const now = String(n.on_delete ?? "restrict");
  if (was !== now) {
    const level: RiskLevel = now === "cascade" ? "destroys data" : "weakens";
    const why =
      now === "cascade"
        ? `: deleting a ${String(n.entity ?? "referenced record")
            .split("/")
            .pop()} deletes these rows too`
        : "";
    out.push({
      rule: "reference.on_delete",
      level,
      message: `changes on_delete of ${f} from ${code(was)} to ${code(now)}${why}`,
      path: [...at, "on_delete"],
    });
  }
}

// ---- routes -----------------------------------------------------------------------------------

function routeRules(b: Obj, a: Obj, out: Raw[]): void {
  const globalOld = strings(obj(b.global_behaviors).roles);
  const globalNew = strings(obj(a.global_behaviors).roles);
  if (obj(b.global_behaviors).roles !== undefined) {
    const wider = obj(a.global_behaviors).roles === undefined ? ["anyone signed in"] : globalNew.filter((r) => !globalOld.includes(r));
    if (wider.length)
      out.push({
        rule: "roles.widened",
        level: "weakens",
        message: `opens the whole API to ${wider.join(", ")}`,
        path: ["global_behaviors", "roles"],
      });
  }
  const key = (e: unknown): string => `${String(obj(e).method)} ${String(obj(e).path)}`;
  const next = list(a.endpoints);
  const nextIndex = new Map(next.map((e, i) => [key(e), i]));
  const who = (ep: Obj, global: string[], hasGlobal: boolean): string[] | null =>
    ep.roles !== undefined ? strings(ep.roles) : hasGlobal ? global : null;
  list(b.endpoints).forEach((oldEp) => {
    const k = key(oldEp);
    const i = nextIndex.get(k);
    if (i === undefined) {
      out.push({
        rule: "endpoint.removed",
        level: "breaks clients",
        message: `removes the endpoint ${k}`,
        path: ["endpoints"],
        subject: k,
      });
      return;
    }
    const o = obj(oldEp);
    const n = obj(next[i]);
    const oldWho = who(o, globalOld, obj(b.global_behaviors).roles !== undefined);
    const newWho = who(n, globalNew, obj(a.global_behaviors).roles !== undefined);
    endpointRules({ key: k, at: ["endpoints", i], o, n, oldWho, newWho }, out);
  });
}

/** One endpoint kept by a Route change (same method and path), before and after, with who may call it. */
interface EndpointChange {
  key: string;
  at: (string | number)[];
  o: Obj;
  n: Obj;
  /** Roles that may call it, null for anyone signed in. */
  oldWho: string[] | null;
  newWho: string[] | null;
}

/** What a change to one endpoint weakens: its rules, its roles, what its body may write or must carry. */
function endpointRules({ key: k, at, o, n, oldWho, newWho }: EndpointChange, out: Raw[]): void {
  const method = String(o.method);
  const newRules = list(n.validation).map((v) => String(obj(v).rule));
  for (const v of list(o.validation)) {
    const rule = String(obj(v).rule);
    if (!newRules.includes(rule))
      out.push({
        rule: "validation.removed",
        level: "weakens",
        message: `removes the ${method} rule \`${rule}\` of ${k}`,
        path: [...at, "validation"],
        subject: rule,
      });
  }
  const audience = newWho === null ? "anyone signed in" : `roles ${newWho.join(", ")}`;
  if (o.roles !== undefined && oldWho !== null) {
    const wider = newWho === null ? ["anyone signed in"] : newWho.filter((r) => !oldWho.includes(r));
    if (wider.length)
      out.push({ rule: "roles.widened", level: "weakens", message: `opens ${k} to ${wider.join(", ")}`, path: [...at, "roles"] });
  }
  const body = (ep: Obj): string[] => [...strings(obj(ep.request_body).required_fields), ...strings(obj(ep.request_body).optional_fields)];
  const hadBody = o.request_body !== undefined;
  const was = body(o);
  for (const field of body(n)) {
    if (hadBody && !was.includes(field)) {
      const inRequired = strings(obj(n.request_body).required_fields).includes(field);
      out.push({
        rule: "field.writable",
        level: "weakens",
        message: `makes \`${field}\` writable through ${k} by ${audience}`,
        path: [...at, "request_body", inRequired ? "required_fields" : "optional_fields"],
        subject: field,
      });
    }
  }
  const requiredNow = strings(obj(n.request_body).required_fields);
  for (const field of strings(obj(o.request_body).required_fields)) {
    if (!requiredNow.includes(field))
      out.push({
        rule: "request.required",
        level: "weakens",
        message: `no longer requires \`${field}\` in ${k}`,
        path: [...at, "request_body"],
        subject: field,
      });
  }
}

// ---- workflows --------------------------------------------------------------------------------

function workflowRules(b: Obj, a: Obj, out: Raw[]): void {
  transitionRules(obj(b.transitions), obj(a.transitions), ["transitions"], "", out);
  const oldOverrides = obj(obj(b.type_overrides).overrides);
  const newOverrides = obj(obj(a.type_overrides).overrides);
  for (const [type, o] of Object.entries(newOverrides)) {
    const at = ["type_overrides", "overrides", type, "transitions"];
    transitionRules(obj(obj(oldOverrides[type]).transitions), obj(obj(o).transitions), at, ` for type \`${type}\``, out);
  }
  const og = obj(b.guards);
  const ng = obj(a.guards);
  for (const [t, g] of Object.entries(og)) {
    if (!(t in ng))
      out.push({ rule: "guard.removed", level: "weakens", message: `removes the guard of \`${t}\``, path: ["guards"], subject: t });
    else if (JSON.stringify(g) !== JSON.stringify(ng[t])) {
      const o = obj(g);
      const n = obj(ng[t]);
      const lost = strings(o.require_fields).filter((f) => !strings(n.require_fields).includes(f));
      const what = [
        ...(o.condition !== undefined && o.condition !== n.condition ? [`condition \`${String(o.condition)}\``] : []),
        ...(lost.length ? [`required field(s) ${lost.join(", ")}`] : []),
      ];
      if (what.length)
        out.push({
          rule: "guard.weakened",
          level: "weakens",
          message: `drops the ${what.join(" and ")} from the guard of \`${t}\``,
          path: ["guards", t],
        });
    }
  }
  for (const t of Object.keys(ng))
    if (!(t in og)) out.push({ rule: "guard.added", level: "info", message: `adds a guard to \`${t}\``, path: ["guards", t] });
}

function transitionRules(old: Obj, next: Obj, at: string[], suffix: string, out: Raw[]): void {
  for (const [from, tos] of Object.entries(next)) {
    const was = strings(old[from]);
    for (const to of strings(tos)) {
      if (!was.includes(to))
        out.push({
          rule: "transition.added",
          level: "weakens",
          message: `adds the transition \`${from} -> ${to}\`${suffix}`,
          path: [...at, from],
          subject: to,
        });
    }
  }
  for (const [from, tos] of Object.entries(old)) {
    const now = strings(next[from]);
    for (const to of strings(tos)) {
      if (!now.includes(to))
        out.push({
          rule: "transition.removed",
          level: "info",
          message: `removes the transition \`${from} -> ${to}\`${suffix}`,
          path: from in next ? [...at, from] : at,
          subject: `${from}->${to}`,
        });
    }
  }
}

// ---- agents -----------------------------------------------------------------------------------

function agentRules(b: Obj, a: Obj, out: Raw[]): void {
  const was = strings(obj(b.output).updates);
  const added = strings(obj(a.output).updates).filter((f) => !was.includes(f));
  if (added.length)
    out.push({
      rule: "agent.updates",
      level: "weakens",
      message: `lets the agent write ${added.map((f) => `\`${f}\``).join(", ")}`,
      path: ["output", "updates"],
    });
  const ot = b.threshold;
  const nt = a.threshold;
  if (typeof ot === "number" && (typeof nt !== "number" || nt < ot))
    out.push({
      rule: "agent.threshold",
      level: "weakens",
      message: `lowers the agent's confidence threshold from ${ot} to ${typeof nt === "number" ? nt : "none"}: its answers are applied with less certainty`,
      path: ["threshold"],
    });
  const cons = strings(a.constraints);
  for (const c of strings(b.constraints)) {
    if (!cons.includes(c))
      out.push({
        rule: "agent.constraint",
        level: "weakens",
        message: `removes the agent's constraint "${c}"`,
        path: ["constraints"],
        subject: c,
      });
  }
}

/** The list shown before the diff and carried by JSON and notifications: one line per finding. */
export function consequenceLines(findings: readonly RiskFinding[]): string[] {
  return findings.map((f) => `[${f.level}] ${f.message} (${f.file}:${f.line}:${f.column})`);
}

/** The review of every file a proposal rewrites (a deterministic fix may touch related contracts). */
export function editsRisk(edits: readonly { file: string; before: string; after: string }[]): RiskFinding[] {
  const all = edits.flatMap((e) => {
    const before = obj(parse(e.before));
    const after = obj(parse(e.after));
    return reviewContractRisk(before, after, e.file, e.after);
  });
  return all.sort((x, y) => RISK_LEVELS.indexOf(x.level) - RISK_LEVELS.indexOf(y.level));
}

/**
 * Why `accepted` does not confirm the findings that need it, or null. `accepted` holds finding ids
 * (`true`: every finding, the CLI's `--accept-risk`); the refusal names each missing finding.
 */
export function unacceptedRisk(findings: readonly RiskFinding[] | undefined, accepted: readonly string[] | true): string | null {
  if (accepted === true) return null;
  const missing = needsConfirmation(findings ?? []).filter((f) => !accepted.includes(f.id));
  if (missing.length === 0) return null;
  return `approving needs an explicit confirmation of ${missing.length} finding(s): ${missing
    .map((f) => `${f.id} (${f.level}: ${f.message} at ${f.file}:${f.line}:${f.column})`)
    .join("; ")}`;
}
