import type { Change } from "../types.js";
import { deepEqual } from "./json-patch.js";

/** Keys whose values are auth users, roles or secrets: a model's proposal never changes them. */
const GUARDED_KEY = /^(password|passwd|secret|secrets|token|tokens|api_key|apikey|users|roles|role|bootstrap|auth|permissions|env_vars)$/i;

/**
 * Why a tier 2/3 proposal is refused, or null. It may change only its target contract (the
 * pipeline gives the proposer no other file), never that contract's kind, name or domain, and
 * nothing about auth users, roles or secrets (docs/threat-model.md: refused rather than
 * held for a second confirmation, the simplest safe choice; such changes are made by hand).
 *
 * Removing one of a Route's endpoints whole is not a change to its roles: the endpoint is no
 * longer served by anyone, and the risk review shows the removal (`endpoint.removed`) to the
 * person who approves it (issue 39).
 */
export function guardedChangeReason(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  changes: readonly Change[],
): string | null {
  const meta = (d: Record<string, unknown>): string => {
    const m = (d.metadata ?? {}) as Record<string, unknown>;
    return `${String(d.kind)}/${String(m.domain)}/${String(m.name)}`;
  };
  if (meta(before) !== meta(after)) return `it turns ${meta(before)} into ${meta(after)}`;
  if (String(after.kind).toLowerCase() === "infra") return "it changes an Infra contract";
  const route = String(after.kind).toLowerCase() === "route";
  for (const c of changes) {
    for (const path of [c.path, c.from ?? "", ...touchedKeyPaths(c, route)]) {
      const key = path
        .split("/")
        .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"))
        .find((k) => GUARDED_KEY.test(k));
      if (key) return `it touches ${JSON.stringify(key)} (auth users, roles or secrets) at ${path}`;
    }
  }
  return null;
}

const ENDPOINTS = "/spec/endpoints";

/**
 * The key paths inside a change's values that it really changes. An array whose length changed
 * comes as one `replace` of the whole array (json-patch.ts): its elements found unchanged on the
 * other side are not touched, and in a Route an endpoint removed whole (no endpoint of the same
 * method and path remains) is a removal, not an edit of its keys.
 */
function touchedKeyPaths(c: Change, route: boolean): string[] {
  if (route && c.op === "remove" && new RegExp(`^${ENDPOINTS}/\\d+$`).test(c.path)) return [];
  if (!Array.isArray(c.before) || !Array.isArray(c.value)) return [...keyPaths(c.value, c.path), ...keyPaths(c.before, c.path)];
  const old: unknown[] = c.before;
  const next: unknown[] = c.value;
  const endpoints = route && c.path === ENDPOINTS;
  const out: string[] = [];
  next.forEach((v, i) => {
    if (!old.some((o) => deepEqual(o, v))) out.push(...keyPaths(v, `${c.path}/${i}`));
  });
  old.forEach((o, i) => {
    if (next.some((v) => deepEqual(o, v))) return;
    if (endpoints && !next.some((v) => endpointKey(v) === endpointKey(o))) return;
    out.push(...keyPaths(o, `${c.path}/${i}`));
  });
  return out;
}

function endpointKey(e: unknown): string {
  const o = (e ?? {}) as Record<string, unknown>;
  return `${String(o.method)} ${String(o.path)}`;
}

function keyPaths(value: unknown, at: string): string[] {
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => [`${at}/${k}`, ...keyPaths(v, `${at}/${k}`)]);
}
