import type { AuthInfraSpec, InfraSpec } from "../contracts/spec-types.generated.js";
import type { Contract, Reporter } from "./context.js";
import type { AgentFallbackIR, AgentIR, AuthIR, EntityIR, InfraIR } from "./ir.js";

export function buildAgent(reporter: Reporter, c: Contract<"Agent">, entities: ReadonlyMap<string, EntityIR>): AgentIR {
  const spec = c.spec;
  const { input, output } = spec;
  const inputEntity = input.entity;
  const inputFields = input.fields ?? [];
  const updates: string[] = output.updates;
  const fallback = agentFallback(reporter, c);
  const entity = inputEntity ? entities.get(inputEntity) : undefined;
  if (entity) {
    const names = entity.fields.map((f) => f.name);
    inputFields.forEach((f, i) => {
      if (!names.includes(f)) reporter.notOneOf(c, ["spec", "input", "fields", i], f, names, "field");
    });
    // The agent writes through the repository like a client would: only fields a client may set.
    const writable = entity.fields.filter((f) => f.writable).map((f) => f.name);
    updates.forEach((f, i) => {
      if (!writable.includes(f)) reporter.notOneOf(c, ["spec", "output", "updates", i], f, writable, "field");
    });
    if (fallback.action === "set") {
      for (const f of Object.keys(fallback.values)) {
        if (!updates.includes(f)) reporter.notOneOf(c, ["spec", "fallback", "values", f], f, updates, "field");
      }
    }
  }
  return {
    fqn: c.fqn,
    name: c.name,
    domain: c.domain,
    file: c.loaded.file,
    description: c.meta.description ?? "",
    trigger: spec.trigger,
    inputEntity,
    inputFields,
    output,
    updates,
    threshold: spec.threshold ?? 0.7,
    approach: spec.approach ?? "",
    constraints: spec.constraints ?? [],
    fallback,
  };
}

function agentFallback(reporter: Reporter, c: Contract<"Agent">): AgentFallbackIR {
  const fallback = c.spec.fallback;
  if (fallback?.action !== "set") return { action: "leave_unchanged" };
  if (fallback.values === undefined) reporter.report(c, ["spec", "fallback"], "schema.required", "'values' is a required property");
  return { action: "set", values: fallback.values ?? {} };
}

export function buildInfra(c: Contract<"Infra">): InfraIR {
  const spec = c.spec;
  const envVars: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.env_vars ?? {})) envVars[k] = v;
  return {
    fqn: c.fqn,
    name: c.name,
    domain: c.domain,
    file: c.loaded.file,
    category: spec.category,
    config: spec.config ?? {},
    envVars,
    bootstrap: spec.bootstrap ?? null,
  };
}

/** Resolves the auth Infra contract: provider, roles, and bootstrap users whose roles exist. */
export function buildAuth(reporter: Reporter, c: Contract<"Infra">): AuthIR {
  // infra.schema.json checks config and bootstrap by its if/then when the category is auth (the
  // caller's condition); a type cannot depend on a value, so the then-branch's type is added here.
  const spec = c.spec as InfraSpec & AuthInfraSpec;
  const roles: string[] = spec.config?.roles ?? [];
  const users = (spec.bootstrap?.users ?? []).map((u, i) => {
    const role = u.role;
    if (roles.length > 0 && !roles.includes(role)) reporter.notOneOf(c, ["spec", "bootstrap", "users", i, "role"], role, roles, "role");
    return { id: u.id, email: u.email, role, password: u.password ?? null };
  });
  return {
    fqn: c.fqn,
    provider: spec.config?.provider === "external" ? "external" : "jwt",
    roles: roles.length > 0 ? roles : ["admin"],
    users,
  };
}
