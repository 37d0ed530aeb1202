import type { DomainIR, EntityIR, WorkflowIR } from "../../compiler/ir.js";
import { hashHeader } from "../header.js";
import { runnableAgents } from "./agents.js";
import { filterFields, rangeFields, sortFields } from "./models.js";
import { assign, call, condition, dict, exploded, kw, lambda, type PyExpr, set, str, subscript, tuple } from "./py-layout.js";
import {
  constantName,
  Imports,
  indent,
  LINE_LENGTH,
  metaConstant,
  pyFrozenset,
  pyStr,
  pyStrTuple,
  pyValue,
  repositoryAlias,
  repositoryDependency,
  usesExprModule,
} from "./python.js";
import { renderSkeleton } from "./templates.js";

/** Pinned versions: the same contracts give the same requirements.txt, and a tested stack. */
export const REQUIREMENTS = [
  "asyncpg==0.32.0",
  "email-validator==2.4.0",
  "fastapi==0.165.0",
  "httpx==0.28.1",
  // Traces (app/observability.py), imported only when the OTEL_* variables switch them on. The
  // server spans are FastAPI's own (its `telemetry` option), the query spans asyncpg's instrumentation.
  "opentelemetry-api==1.45.1",
  "opentelemetry-exporter-otlp-proto-http==1.45.1",
  "opentelemetry-instrumentation-asyncpg==0.66b1",
  "opentelemetry-sdk==1.45.1",
  "orjson==3.13.0",
  "prometheus-client==0.26.0",
  "pydantic==2.14.3",
  "pydantic-settings==2.16.3",
  "pyjwt[crypto]==2.15.1",
  // httpx's transport asks sniffio which event loop runs on every request; without it installed that
  // is a failed import each time (about a millisecond of file lookups per call to an agent's model).
  "sniffio==1.3.1",
  // TypeAliasType: the recursive JSON value of app/fieldtypes.py (typing has it from Python 3.12).
  "typing-extensions==4.16.0",
  "uvicorn[standard]==0.54.0",
];

/** Ruff settings of the generated backend, so `ruff check` means the same with any ruff version. */
export function generatePyproject(ir: DomainIR): string {
  return [
    hashHeader(),
    "[project]",
    `name = ${pyStr(`${ir.domain.replace(/_/g, "-")}-backend`)}`,
    'version = "0.1.0"',
    'requires-python = ">=3.11"',
    "",
    "[tool.ruff]",
    'target-version = "py311"',
    `line-length = ${LINE_LENGTH}`,
    "",
    "[tool.ruff.lint]",
    // No E501: `ruff format` lays the lines out, and a line it cannot break holds one identifier
    // the contracts named (a long entity or field name), which no layout can shorten.
    'select = ["E4", "E7", "E9", "F", "I", "B", "UP", "RUF"]',
    "",
    "[tool.mypy]",
    'python_version = "3.11"',
    "",
    "# asyncpg ships no type information.",
    "[[tool.mypy.overrides]]",
    'module = ["asyncpg", "asyncpg.*"]',
    "ignore_missing_imports = true",
    "",
  ].join("\n");
}

export function generateRequirements(): string {
  return `${hashHeader()}${REQUIREMENTS.join("\n")}\n`;
}

/** Flags and values every skeleton module of the domain is rendered with. */
function skeleton(path: string, ir: DomainIR): string {
  const title = ir.domain.charAt(0).toUpperCase() + ir.domain.slice(1);
  return (
    hashHeader() +
    renderSkeleton(path, {
      flags: { auth: ir.auth !== null, agents: runnableAgents(ir).length > 0 },
      values: { domain: ir.domain, title },
    })
  );
}

export function generateConfig(ir: DomainIR): string {
  return skeleton("app/config.py", ir);
}

/** app/domain.py: the contracts' facts as data (entity metadata). */
export function generateDomain(ir: DomainIR, entities: EntityIR[]): string {
  const metas = entities.map((e) => {
    const seqField = e.fields.find((f) => f.computed?.kind === "sequence");
    const seq = seqField?.computed?.kind === "sequence" ? seqField.computed : null;
    const writable = e.fields.filter((f) => f.writable);
    const refs = e.fields.filter((f) => f.references).map((f) => [f.name, f.references?.entityName ?? ""] as const);
    const cascades = e.fields.filter((f) => f.references?.onDelete === "cascade").map((f) => f.name);
    const hasCreatedAt = e.fields.some((f) => f.name === "created_at");
    const serverDefaults = e.fields.filter((f) => !f.writable && f.hasDefault && f.computed === null && f.name !== "state");
    const strings = (names: readonly string[]): PyExpr => tuple(names.map(pyStr));
    const nameSet = (names: readonly string[]): PyExpr =>
      names.length === 0 ? "frozenset()" : call("frozenset", [set([...names].sort().map(pyStr))]);
    const args: PyExpr[] = [
      kw("name", pyStr(e.name)),
      kw("table", pyStr(e.table)),
      kw("columns", strings(e.fields.map((f) => f.name))),
      kw("json_columns", nameSet(e.fields.filter((f) => f.type === "array" || f.type === "object").map((f) => f.name))),
      kw("filterable", nameSet(filterFields(e).map((f) => f.name))),
      kw("ranged", nameSet(rangeFields(e).map((f) => f.name))),
      kw("sortable", nameSet(sortFields(e).map((f) => f.name))),
      // The sortable columns the schema declares NOT NULL: a cursor after one of them seeks its index.
      kw(
        "sorted_not_null",
        nameSet(
          sortFields(e)
            .filter((f) => !f.nullable)
            .map((f) => f.name),
        ),
      ),
      kw("searchable", strings(e.searchFields)),
      kw("required", nameSet(writable.filter((f) => f.required).map((f) => f.name))),
      kw("immutable", nameSet(writable.filter((f) => f.immutable).map((f) => f.name))),
      ...(seq && seqField
        ? [
            kw(
              "sequence",
              call("SequenceSpec", [
                kw("column", pyStr(seqField.name)),
                kw("name", pyStr(seq.sequenceName)),
                kw("format", pyStr(seq.format)),
                kw("prefix", pyStr(seq.prefix ?? "")),
              ]),
            ),
          ]
        : []),
      kw("soft_delete", e.softDelete ? "True" : "False"),
      // Only where the contract asks: the other entities keep the default and domain.py its bytes.
      ...(e.listTotal === "counter" ? [kw("row_counter", "True")] : []),
      kw("references", dict(refs.map(([k, v]) => [pyStr(k), pyStr(v)] as const))),
      // The postgres target's foreign keys, for the memory adapter: `on_delete` of each reference.
      kw("restrict_delete", nameSet(e.fields.filter((f) => f.references?.onDelete === "restrict").map((f) => f.name))),
      ...(cascades.length > 0 ? [kw("cascade_delete", nameSet(cascades))] : []),
      kw("default_order", strings(hasCreatedAt ? ["created_at", "id"] : ["id"])),
      ...(serverDefaults.length > 0
        ? [kw("server_defaults", dict(serverDefaults.map((f) => [pyStr(f.name), pyValue(f.default)] as const)))]
        : []),
    ];
    return assign(metaConstant(e.name), exploded(call("EntityMeta", args)));
  });
  const usesSeq = entities.some((e) => e.fields.some((f) => f.computed?.kind === "sequence"));
  return [
    hashHeader(),
    `"""What the contracts of the ${ir.domain} domain say, as data the static modules are driven by."""`,
    "",
    `from app.repositories.base import EntityMeta${usesSeq ? ", SequenceSpec" : ""}`,
    "",
    `DOMAIN = ${pyStr(ir.domain)}`,
    "",
    ...metas.flatMap((m) => [m, ""]),
    assign("ENTITIES", tuple(entities.map((e) => metaConstant(e.name)))),
    "",
  ].join("\n");
}

/**
 * app/deps.py: the skeleton, then per entity its repository dependency and the `Annotated` alias the
 * handlers take it by (`repo: TicketRepo`), laid out here so that long entity names wrap as ruff would.
 */
export function generateDeps(ir: DomainIR): string {
  const entities = [...ir.entities].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const aliases = entities.flatMap((e) => [
    assign(repositoryDependency(e.name), call("RepositoryOf", [pyStr(e.name)])),
    assign(repositoryAlias(e.className), subscript("Annotated", ["Repository", call("Depends", [repositoryDependency(e.name)])])),
  ]);
  return `${skeleton("app/deps.py", ir)}\n\n${aliases.join("\n")}\n`;
}

function workflowConstant(w: WorkflowIR): string {
  const strings = (items: readonly string[]): PyExpr => tuple(items.map(pyStr));
  const terminal = w.states.filter((s) => s.terminal).map((s) => s.name);
  const transitions = w.states.map((s) => [pyStr(s.name), strings(w.transitions[s.name] ?? [])] as const);
  const guards = w.guards.map((g) => {
    const args = [
      ...(g.requireFields.length ? [kw("require_fields", strings(g.requireFields))] : []),
      ...(g.condition
        ? [kw("condition", lambda("values", condition(g.condition.expr))), kw("condition_source", str(g.condition.source))]
        : []),
    ];
    return [tuple([pyStr(g.from), pyStr(g.to)]), exploded(call("Guard", args))] as const;
  });
  const effects = w.sideEffects.map((s) => {
    const events = s.actions.flatMap((a) => ("emitEvent" in a ? [a.emitEvent] : []));
    const set: Record<string, unknown> = {};
    for (const a of s.actions) if ("set" in a) Object.assign(set, a.set);
    const args = [...(events.length ? [kw("events", strings(events))] : []), ...(Object.keys(set).length ? [kw("set", pyValue(set))] : [])];
    return [tuple([pyStr(s.from), pyStr(s.to)]), call("Effects", args)] as const;
  });
  const args: PyExpr[] = [
    kw("name", pyStr(w.name)),
    kw("initial", pyStr(w.initial)),
    kw("states", strings(w.states.map((s) => s.name))),
    kw("terminal", pyFrozenset(terminal)),
    kw("transitions", exploded(dict(transitions))),
    ...(guards.length ? [kw("guards", exploded(dict(guards)))] : []),
    ...(effects.length ? [kw("effects", exploded(dict(effects)))] : []),
  ];
  const typeOverrides = w.typeOverrides?.overrides.length ? w.typeOverrides : null;
  if (typeOverrides) {
    args.push(kw("type_field", pyStr(typeOverrides.field)));
    const overrides = typeOverrides.overrides.map(
      (o) => [pyStr(o.value), dict(Object.entries(o.transitions).map(([from, to]) => [pyStr(from), strings(to)] as const))] as const,
    );
    args.push(kw("type_overrides", exploded(dict(overrides))));
  }
  return assign(constantName(w.name), exploded(call("Workflow", args)));
}

export function generateWorkflows(ir: DomainIR, workflows: WorkflowIR[]): string {
  const usesExpr = workflows.some((w) => w.guards.some((g) => g.condition && usesExprModule(g.condition.expr)));
  const usesGuard = workflows.some((w) => w.guards.length > 0);
  const usesEffects = workflows.some((w) => w.sideEffects.length > 0);
  const names = [...(usesEffects ? ["Effects"] : []), ...(usesGuard ? ["Guard"] : []), ...(workflows.length ? ["Workflow"] : [])];
  return [
    hashHeader(),
    `"""The state machines of the ${ir.domain} domain (Workflow contracts)."""`,
    "",
    ...(usesExpr ? ["from app import expr"] : []),
    ...(names.length ? [`from app.workflow import ${names.join(", ")}`, ""] : []),
    ...workflows.flatMap((w) => [`# ${w.fqn}${w.description ? `: ${w.description}` : ""}`, workflowConstant(w), ""]),
  ].join("\n");
}

export function generateBootstrap(ir: DomainIR): string {
  const users = (ir.auth?.users ?? []).map(
    (u) =>
      `BootstrapUser(id=${pyStr(u.id)}, email=${pyStr(u.email)}, role=${pyStr(u.role)}, password=${u.password === null ? "None" : pyStr(u.password)}),`,
  );
  return [
    hashHeader(),
    `"""Roles and bootstrap users of ${ir.auth?.fqn ?? "the auth contract"}; passwords are hashed on first start."""`,
    "",
    "from app.auth.users import BootstrapUser",
    "",
    `ROLES = ${pyStrTuple(ir.auth?.roles ?? [])}`,
    "",
    `BOOTSTRAP_USERS = ${users.length ? `(\n${indent(users.join("\n"))}\n)` : "()"}`,
    "",
  ].join("\n");
}

export function generateMain(ir: DomainIR): string {
  return skeleton("app/main.py", ir);
}

/**
 * app/routes/__init__.py: the routers of the route modules, which app/main.py includes. The modules
 * are named after base paths (`/settings` -> `settings`): imported here, where no other name lives,
 * rather than into app/main.py, whose own names (`settings`, `health`, `app`) they would shadow.
 */
export function generateRoutesPackage(routeModules: readonly string[]): string {
  const imports = new Imports();
  imports.add("fastapi", "APIRouter");
  for (const m of routeModules) imports.add("app.routes", m);
  return [
    hashHeader(),
    '"""HTTP routes, one module per Route contract."""',
    "",
    imports.render(),
    "",
    assign("ROUTERS: tuple[APIRouter, ...]", tuple(routeModules.map((m) => `${m}.router`))),
    "",
  ].join("\n");
}
