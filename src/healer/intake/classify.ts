import { FQN_PATTERN, GRAPH_EDGE_PATTERN, NAME_PATTERN, NUMBER_PREFIX_PATTERN, pyRepr } from "../../contracts/index.js";
import type { FixableBy, Priority, TicketSource, Tier } from "../types.js";

/** The outcome of classifying one error (the rules and patterns below). */
export interface Classification {
  /** `naming` ... `runtime_exception`; empty when no pattern matched. */
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
  /** The finding's code (`schema.pattern`, `ref.unresolved`, ...), when the report is a finding. */
  code?: string | undefined;
  /** The finding's schema path, which tells one pattern from another. */
  schemaPath?: string | undefined;
  /**
   * Whether the contracts define a table or a column, when the caller knows them: a missing one the
   * contracts define is database drift; one they do not define was invented by the generated code.
   */
  defines?: ((kind: "table" | "column", name: string) => boolean) | undefined;
}

/** A table or column the database says it does not have. */
export interface MissingObject {
  kind: "table" | "column";
  name: string;
}

/**
 * PostgreSQL's (and SQLite's) wording for a missing column or table, and asyncpg's exception names;
 * a qualified name (`t.col`, `public.tickets`) is reduced to its last part.
 */
export function missingObjectOf(message: string): MissingObject | null {
  const column = /\bcolumn "?(?:\w+"?\.)?"?(\w+)"?(?: of relation "?\w+"?)? does not exist|\bno such column: (?:\w+\.)?(\w+)/i.exec(
    message,
  );
  if (column) return { kind: "column", name: (column[1] ?? column[2]) as string };
  const table = /\brelation "(?:\w+\.)?(\w+)" does not exist|\bno such table: (?:\w+\.)?(\w+)/i.exec(message);
  if (table) return { kind: "table", name: (table[1] ?? table[2]) as string };
  if (/\bUndefinedColumnError\b/.test(message)) return { kind: "column", name: "" };
  if (/\bUndefinedTableError\b/.test(message)) return { kind: "table", name: "" };
  return null;
}

export const TIER1_TYPES = ["naming", "fqn_format", "graph_edge", "number_prefix"] as const;
export const TIER2_TYPES = [
  "missing_field",
  "schema_mismatch",
  "invalid_enum",
  "missing_reference",
  "dependency_cycle",
  "unknown_property",
  "yaml_syntax",
  "invalid_expression",
] as const;

type Rule = { type: string; tier: Tier; priority: Priority; reason: string };

/** The tier 1 patterns by the schema definition they belong to (common.schema.json `$defs`). */
const PATTERN_DEFS: Record<string, Rule> = {
  name: { type: "naming", tier: 1, priority: "low", reason: `does not match ${NAME_PATTERN}` },
  fqn: { type: "fqn_format", tier: 1, priority: "low", reason: "value does not match the FQN pattern" },
  graphEdge: { type: "graph_edge", tier: 1, priority: "low", reason: `does not match ${GRAPH_EDGE_PATTERN}` },
  numberPrefix: { type: "number_prefix", tier: 1, priority: "low", reason: `does not match ${NUMBER_PREFIX_PATTERN}` },
};

const structural = (type: string, reason: string, priority: Priority = "medium"): Rule => ({ type, tier: 2, priority, reason });

/**
 * Findings are classified by their code, not by their wording. A pattern finding is told apart by
 * the schema definition that failed, or, where the schema states the pattern inline (the
 * `propertyNames` of fields and states), by the pattern itself, which the message quotes from
 * the contract language's own constants.
 */
function ruleForCode(code: string, schemaPath: string, message: string): Rule | null {
  if (code === "schema.pattern") {
    const def = /\$defs\/([A-Za-z]+)\/pattern$/.exec(schemaPath)?.[1];
    const known = def ? PATTERN_DEFS[def] : undefined;
    if (known) return known;
    const byPattern = CONTRACT_RULES.find((r) => r.tier === 1 && r.test(message));
    return byPattern ?? structural("schema_mismatch", "value does not match a pattern");
  }
  switch (code) {
    case "schema.required":
      return structural("missing_field", "is a required property");
    case "schema.enum":
    case "schema.const":
      return structural("invalid_enum", "is not one of the allowed values");
    case "schema.additionalProperties":
    case "schema.unevaluatedProperties":
      return structural("unknown_property", "a property the contract language does not know");
    case "ref.unresolved":
    case "ref.wrong_kind":
      return structural("missing_reference", "unresolved reference", "high");
    case "graph.cycle":
      return structural("dependency_cycle", "dependency cycle", "high");
    case "name.too_long":
      // Not a pattern a mechanical rename can satisfy: someone has to choose the shorter name.
      return structural("schema_mismatch", "a name longer than PostgreSQL's 63-byte identifier limit");
    case "expr.syntax":
      return structural("invalid_expression", "an expression that does not parse");
  }
  if (code.startsWith("yaml.")) return structural("yaml_syntax", "the file is not a readable YAML contract");
  if (code.startsWith("schema.")) return structural("schema_mismatch", `schema keyword ${code.slice("schema.".length)}`);
  return null;
}

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

/** Errors no contract change can fix (fixed in the generator or the data instead). */
const NOT_CONTRACT_RULES: readonly { fixableBy: Exclude<FixableBy, "contract">; re: RegExp; reason: string }[] = [
  { fixableBy: "generator", re: /invalid (input syntax for type )?uuid/i, reason: "invalid UUID" },
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
 * Classifies an error: a validation finding by its code, anything else by its message. Runtime reports take the runtime types (500 and above critical,
 * anything else high); reports of the other sources take the contract patterns. Generator and
 * data patterns are checked for every source and set `fixableBy` without changing the type, so a
 * runtime "column does not exist" with status 500 is `runtime_500`, tier 3, critical, generator.
 * An unknown contract message stays tier 2 with an empty type: it needs a proposer's judgement.
 */
export function classifyError(input: ClassifyInput): Classification {
  const { message } = input;
  const missing = missingObjectOf(message);
  let notContract: { fixableBy: Exclude<FixableBy, "contract">; reason: string } | undefined;
  if (missing) {
    const what = missing.name ? `${missing.kind} "${missing.name}" does not exist` : `a ${missing.kind} does not exist`;
    if (!missing.name || !input.defines || input.defines(missing.kind, missing.name)) {
      const status = input.statusCode ?? statusInMessage(message);
      const priority: Priority = status !== undefined && status >= 500 ? "critical" : "high";
      return { errorType: DATABASE_DRIFT, tier: 3, priority, fixableBy: "data", reason: what };
    }
    notContract = { fixableBy: "generator", reason: `${what} and no contract defines it` };
  } else {
    notContract = NOT_CONTRACT_RULES.find((r) => r.re.test(message));
  }
  const fixableBy: FixableBy = notContract?.fixableBy ?? "contract";
  const runtime = input.source === "runtime" || (input.statusCode !== undefined && input.statusCode >= 500);
  if (!runtime) {
    const rule =
      (input.code ? ruleForCode(input.code, input.schemaPath ?? "", message) : null) ?? CONTRACT_RULES.find((r) => r.test(message));
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

/**
 * The class of a table or column the contracts define but the database lacks: migrations not
 * generated or not applied. No contract change fixes it, and the generator is not at fault.
 */
export const DATABASE_DRIFT = "database_drift";

/** The message stored with a ticket that no contract change can fix. */
export function notFixableDiagnostic(c: Classification): string {
  if (c.errorType === DATABASE_DRIFT) {
    return `not fixable by a contract change: the database is behind the contracts (${c.reason}); generate the migrations (charter forge generate DOMAIN --target migrations) and apply them (python -m app.migrate in the backend, or restart it: it migrates on start)`;
  }
  if (c.fixableBy === "generator") {
    return `not fixable by a contract change: this looks like a generator bug (${c.reason}); fix the generator or report it, then regenerate`;
  }
  return `not fixable by a contract change: this looks like a data or infrastructure issue (${c.reason}); correct the data or the service, then retry the request`;
}
