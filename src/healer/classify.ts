import { FQN_PATTERN, GRAPH_EDGE_PATTERN, NAME_PATTERN, NUMBER_PREFIX_PATTERN, pyRepr } from "../contracts/index.js";
import type { FixableBy, Priority, TicketSource, Tier } from "./types.js";

/** The outcome of classifying one error (SPEC.md "Classification rules" and "patterns"). */
export interface Classification {
  /** `naming` ... `runtime_exception`; empty when no pattern matched (SPEC.md's default). */
  errorType: string;
  tier: Tier;
  priority: Priority;
  fixableBy: FixableBy;
  /** Which rule matched, in words; stored as the diagnostic of generator and data failures. */
  reason: string;
}

export interface ClassifyInput {
  source: TicketSource;
  message: string;
  statusCode?: number | undefined;
}

export const TIER1_TYPES = ["naming", "fqn_format", "graph_edge", "number_prefix"] as const;
export const TIER2_TYPES = ["missing_field", "schema_mismatch", "invalid_enum", "missing_reference", "dependency_cycle"] as const;

/**
 * Contract patterns, tried in order. Pattern findings are matched on the pattern text itself
 * (the constants of fqn.ts, quoted the way the validator quotes them), never on a copy of it, so a
 * change of a pattern in the contract language cannot silently break classification.
 */
const CONTRACT_RULES: readonly { type: string; tier: Tier; priority: Priority; test: (m: string) => boolean; reason: string }[] = [
  {
    type: "fqn_format",
    tier: 1,
    priority: "low",
    test: (m) => doesNotMatch(m, FQN_PATTERN) || /does not match the FQN pattern/i.test(m),
    reason: "value does not match the FQN pattern",
  },
  { type: "naming", tier: 1, priority: "low", test: (m) => doesNotMatch(m, NAME_PATTERN), reason: `does not match ${NAME_PATTERN}` },
  {
    type: "graph_edge",
    tier: 1,
    priority: "low",
    test: (m) => doesNotMatch(m, GRAPH_EDGE_PATTERN),
    reason: `does not match ${GRAPH_EDGE_PATTERN}`,
  },
  {
    type: "number_prefix",
    tier: 1,
    priority: "low",
    test: (m) => doesNotMatch(m, NUMBER_PREFIX_PATTERN),
    reason: `does not match ${NUMBER_PREFIX_PATTERN}`,
  },
  { type: "missing_field", tier: 2, priority: "medium", test: (m) => /is a required property/.test(m), reason: "is a required property" },
  {
    type: "schema_mismatch",
    tier: 2,
    priority: "medium",
    test: (m) => /is not valid under any of the given schemas/.test(m),
    reason: "is not valid under any of the given schemas",
  },
  { type: "invalid_enum", tier: 2, priority: "medium", test: (m) => /is not one of/.test(m), reason: "is not one of" },
  { type: "missing_reference", tier: 2, priority: "high", test: (m) => /unresolved reference/i.test(m), reason: "unresolved reference" },
  { type: "dependency_cycle", tier: 2, priority: "high", test: (m) => /\bcycle\b/i.test(m), reason: "dependency cycle" },
];

/** Errors no contract change can fix (SPEC.md "Errors": not fixable by a contract). */
const NOT_CONTRACT_RULES: readonly { fixableBy: Exclude<FixableBy, "contract">; re: RegExp; reason: string }[] = [
  { fixableBy: "generator", re: /invalid (input syntax for type )?uuid/i, reason: "invalid UUID" },
  { fixableBy: "generator", re: /column .*does not exist/i, reason: "column does not exist" },
  { fixableBy: "generator", re: /syntax error at or near/i, reason: "SQL syntax error" },
  { fixableBy: "generator", re: /\b(ImportError|ModuleNotFoundError)\b/, reason: "ImportError or ModuleNotFoundError" },
  { fixableBy: "generator", re: /\b(NameError|AttributeError)\b/, reason: "NameError or AttributeError" },
  { fixableBy: "data", re: /duplicate key value violates unique constraint/i, reason: "duplicate key value violates unique constraint" },
  { fixableBy: "data", re: /foreign key.*violat|violat.*foreign key/i, reason: "foreign key violation" },
  { fixableBy: "data", re: /null value in column .*violates not-null/i, reason: "null value in a not-null column" },
  { fixableBy: "data", re: /connection refused|ECONNREFUSED|\btimed? ?out\b/i, reason: "connection refused or timeout" },
];

function doesNotMatch(message: string, pattern: string): boolean {
  return message.includes("does not match") && message.includes(pyRepr(pattern));
}

/**
 * Classifies an error message. Runtime reports take the runtime types (500 and above critical,
 * anything else high); reports of the other sources take the contract patterns. Generator and
 * data patterns are checked for every source and set `fixableBy` without changing the type, so a
 * runtime "column does not exist" with status 500 is `runtime_500`, tier 3, critical, generator.
 * An unknown contract message stays tier 2 with an empty type: it needs a proposer's judgement.
 */
export function classifyError(input: ClassifyInput): Classification {
  const { message } = input;
  const notContract = NOT_CONTRACT_RULES.find((r) => r.re.test(message));
  const fixableBy: FixableBy = notContract?.fixableBy ?? "contract";
  const runtime = input.source === "runtime" || (input.statusCode !== undefined && input.statusCode >= 500);
  if (!runtime) {
    const rule = CONTRACT_RULES.find((r) => r.test(message));
    if (rule)
      return { errorType: rule.type, tier: rule.tier, priority: rule.priority, fixableBy, reason: notContract?.reason ?? rule.reason };
    if (notContract) return { errorType: "runtime_exception", tier: 3, priority: "high", fixableBy, reason: notContract.reason };
    return { errorType: "", tier: 2, priority: "medium", fixableBy, reason: "no known pattern matched" };
  }
  const status = input.statusCode ?? statusInMessage(message);
  if (status !== undefined && status >= 500) {
    return { errorType: "runtime_500", tier: 3, priority: "critical", fixableBy, reason: notContract?.reason ?? `HTTP status ${status}` };
  }
  return { errorType: "runtime_exception", tier: 3, priority: "high", fixableBy, reason: notContract?.reason ?? "runtime exception" };
}

/** `status 503`, `status_code=500`, `HTTP 502`: a status stated in the message itself. */
function statusInMessage(message: string): number | undefined {
  const m = /\b(?:status(?:[ _]code)?|HTTP)[\s:=]*([1-5]\d\d)\b/i.exec(message);
  return m ? Number(m[1]) : undefined;
}

/** The message stored with a ticket that no contract change can fix. */
export function notFixableDiagnostic(c: Classification): string {
  if (c.fixableBy === "generator") {
    return `not fixable by a contract change: this looks like a generator bug (${c.reason}); fix the generator or report it, then regenerate`;
  }
  return `not fixable by a contract change: this looks like a data or infrastructure issue (${c.reason}); correct the data or the service, then retry the request`;
}
