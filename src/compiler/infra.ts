import type { Contract, Reporter } from "./context.js";
import { asRecord, asString, asStringArray } from "./context.js";
import type { AgentFallbackIR, AgentIR, AuthIR, EntityIR, InfraIR } from "./ir.js";

export function buildAgent(reporter: Reporter, c: Contract, entities: ReadonlyMap<string, EntityIR>): AgentIR {
  const spec = c.spec;
  const input = asRecord(spec.input);
  const output = asRecord(spec.output);
  const inputEntity = typeof input.entity === "string" ? input.entity : null;
  const inputFields = asStringArray(input.fields);
  const updates = asStringArray(output.updates);
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
    description: asString(c.meta.description),
    trigger: asString(spec.trigger),
    inputEntity,
    inputFields,
    output,
    updates,
    threshold: typeof spec.threshold === "number" ? spec.threshold : 0.7,
    approach: asString(spec.approach),
    constraints: asStringArray(spec.constraints),
    fallback,
  };
}

function agentFallback(reporter: Reporter, c: Contract): AgentFallbackIR {
  const raw = asRecord(c.spec.fallback);
  if (raw.action !== "set") return { action: "leave_unchanged" };
  if (!("values" in raw)) reporter.report(c, ["spec", "fallback"], "schema.required", "'values' is a required property");
  return { action: "set", values: asRecord(raw.values) };
}

export function buildInfra(c: Contract): InfraIR {
  const spec = c.spec;
  const envVars: Record<string, string> = {};
  for (const [k, v] of Object.entries(asRecord(spec.env_vars))) envVars[k] = String(v);
  return {
    fqn: c.fqn,
    name: c.name,
    domain: c.domain,
    file: c.loaded.file,
    category: asString(spec.category),
    config: asRecord(spec.config),
    envVars,
    bootstrap: spec.bootstrap ?? null,
  };
}

/** Resolves the auth Infra contract: provider, roles, and bootstrap users whose roles exist. */
export function buildAuth(reporter: Reporter, c: Contract, infra: InfraIR): AuthIR {
  const roles = asStringArray(infra.config.roles);
  const users = (Array.isArray(asRecord(infra.bootstrap).users) ? (asRecord(infra.bootstrap).users as unknown[]) : []).map((raw, i) => {
    const u = asRecord(raw);
    const role = asString(u.role);
    if (roles.length > 0 && !roles.includes(role)) reporter.notOneOf(c, ["spec", "bootstrap", "users", i, "role"], role, roles, "role");
    return { id: asString(u.id), email: asString(u.email), role, password: typeof u.password === "string" ? u.password : null };
  });
  return {
    fqn: c.fqn,
    provider: infra.config.provider === "external" ? "external" : "jwt",
    roles: roles.length > 0 ? roles : ["admin"],
    users,
  };
}
