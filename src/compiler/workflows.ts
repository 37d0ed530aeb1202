import { type Expr, ExpressionError, expressionNames, parseExpression } from "../contracts/expression.js";
import type { Contract, ContractEnvelope, PathSegments, Reporter } from "./context.js";
import type { EntityIR, GuardIR, SideEffectIR, StateIR, TypeOverrideIR, WorkflowActionIR, WorkflowIR } from "./ir.js";
import { humanize } from "./naming.js";

/** Parses an expression, reporting a located finding (at the expression's node) when it fails. */
export function parseChecked(reporter: Reporter, c: ContractEnvelope, path: PathSegments, source: string): Expr | null {
  try {
    return parseExpression(source);
  } catch (e) {
    if (e instanceof ExpressionError) {
      reporter.report(c, path, "expr.syntax", `invalid expression ${JSON.stringify(source)}: ${e.message} at offset ${e.offset}`);
      return null;
    }
    throw e;
  }
}

function splitMove(key: string): [string, string] {
  const [from = "", to = ""] = key.split("->").map((s) => s.trim());
  return [from, to];
}

/** Builds a workflow and checks the consistency that needs no entity: states and transitions. */
export function buildWorkflow(reporter: Reporter, c: Contract<"Workflow">): WorkflowIR {
  const spec = c.spec;
  const states: StateIR[] = Object.entries(spec.states).map(([name, d]) => ({
    name,
    label: d.label ?? humanize(name),
    category: d.category ?? "open",
    terminal: d.terminal === true,
    color: d.color ?? null,
    description: d.description ?? "",
  }));
  const names = states.map((s) => s.name);
  const initial = spec.initial;
  if (!names.includes(initial)) reporter.notOneOf(c, ["spec", "initial"], initial, names, "state");

  const transitions = workflowTransitions(reporter, c, states);
  const allowed = (from: string, to: string): boolean => transitions[from]?.includes(to) ?? false;
  const moves = Object.entries(transitions).flatMap(([from, tos]) => tos.map((to) => `${from} -> ${to}`));

  const guards: GuardIR[] = [];
  for (const [key, d] of Object.entries(spec.guards ?? {})) {
    const [from, to] = splitMove(key);
    if (!allowed(from, to)) {
      reporter.notOneOf(c, ["spec", "guards", key], key, moves, "transition");
      continue;
    }
    const source = d.condition ?? null;
    const expr = source === null ? null : parseChecked(reporter, c, ["spec", "guards", key, "condition"], source);
    guards.push({
      from,
      to,
      requireFields: d.require_fields ?? [],
      condition: source !== null && expr ? { source, expr } : null,
    });
  }

  const sideEffects: SideEffectIR[] = [];
  for (const [key, list] of Object.entries(spec.side_effects ?? {})) {
    const [from, to] = splitMove(key);
    if (!allowed(from, to)) {
      reporter.notOneOf(c, ["spec", "side_effects", key], key, moves, "transition");
      continue;
    }
    const actions: WorkflowActionIR[] = list.map((a) => ("emit_event" in a ? { emitEvent: a.emit_event } : { set: a.set }));
    sideEffects.push({ from, to, actions });
  }

  const typeOverrides = workflowTypeOverrides(reporter, c, names);

  return {
    fqn: c.fqn,
    name: c.name,
    domain: c.domain,
    file: c.loaded.file,
    description: c.meta.description ?? "",
    initial,
    states,
    transitions,
    guards,
    sideEffects,
    typeOverrides,
    entities: [],
  };
}

/**
 * The workflow's transitions from each state, every state listed; moves naming an unknown state
 * are reported and dropped, and a terminal state with moves is reported.
 */
function workflowTransitions(reporter: Reporter, c: Contract<"Workflow">, states: readonly StateIR[]): Record<string, string[]> {
  const names = states.map((s) => s.name);
  const transitions: Record<string, string[]> = {};
  for (const s of states) transitions[s.name] = [];
  for (const [from, list] of Object.entries(c.spec.transitions)) {
    if (!names.includes(from)) {
      reporter.notOneOf(c, ["spec", "transitions", from], from, names, "state");
      continue;
    }
    list.forEach((to, i) => {
      if (!names.includes(to)) reporter.notOneOf(c, ["spec", "transitions", from, i], to, names, "state");
    });
    const state = states.find((s) => s.name === from);
    if (state?.terminal && list.length > 0) {
      reporter.report(
        c,
        ["spec", "transitions", from],
        "workflow.terminal_moves",
        `terminal state ${JSON.stringify(from)} must have no outgoing transitions`,
      );
    }
    transitions[from] = [...new Set(list.filter((t) => names.includes(t)))];
  }
  return transitions;
}

/** The per-type transition overrides; states they name are checked to exist. */
function workflowTypeOverrides(reporter: Reporter, c: Contract<"Workflow">, names: readonly string[]): TypeOverrideIR | null {
  const to = c.spec.type_overrides;
  if (to === undefined) return null;
  return {
    field: to.field,
    overrides: Object.entries(to.overrides).map(([value, o]) => {
      const out: Record<string, string[]> = {};
      for (const [from, targets] of Object.entries(o.transitions)) {
        const base = ["spec", "type_overrides", "overrides", value, "transitions", from];
        if (!names.includes(from)) reporter.notOneOf(c, base, from, names, "state");
        targets.forEach((target, i) => {
          if (!names.includes(target)) reporter.notOneOf(c, [...base, i], target, names, "state");
        });
        out[from] = targets.filter((x) => names.includes(x));
      }
      return { value, transitions: out };
    }),
  };
}

/**
 * Checks the parts of a workflow that name entity fields against every entity it governs: guard
 * fields and conditions, `set` side effects, and the type-override field and values.
 */
export function checkWorkflowFields(reporter: Reporter, c: Contract<"Workflow">, wf: WorkflowIR, entity: EntityIR): void {
  const fieldNames = entity.fields.map((f) => f.name);
  const known = (name: string): boolean => fieldNames.includes(name);
  for (const g of wf.guards) {
    const key = `${g.from} -> ${g.to}`;
    g.requireFields.forEach((f, i) => {
      if (!known(f)) reporter.notOneOf(c, ["spec", "guards", key, "require_fields", i], f, fieldNames, "field");
    });
    if (g.condition) {
      for (const n of expressionNames(g.condition.expr)) {
        if (!known(n)) reporter.notOneOf(c, ["spec", "guards", key, "condition"], n, fieldNames, "field");
      }
    }
  }
  for (const se of wf.sideEffects) {
    se.actions.forEach((a, i) => {
      if ("set" in a) {
        for (const f of Object.keys(a.set)) {
          if (!known(f)) reporter.notOneOf(c, ["spec", "side_effects", `${se.from} -> ${se.to}`, i, "set", f], f, fieldNames, "field");
        }
      }
    });
  }
  if (wf.typeOverrides) {
    const field = entity.fields.find((f) => f.name === wf.typeOverrides?.field);
    if (!field) {
      reporter.notOneOf(c, ["spec", "type_overrides", "field"], wf.typeOverrides.field, fieldNames, "field");
    } else if (field.enum) {
      const values = field.enum.map(String);
      for (const o of wf.typeOverrides.overrides) {
        if (!values.includes(o.value)) reporter.notOneOf(c, ["spec", "type_overrides", "overrides", o.value], o.value, values, "value");
      }
    }
  }
}
