import { humanize, kebabCase, pluralize } from "../compiler/naming.js";
import { reservedBasePath } from "../compiler/routes.js";
import { compareText } from "../shared/text.js";
import type { ImportNote, ImportOperation } from "./model.js";

type Operation = "list" | "create" | "get" | "update" | "delete";

/** How one source operation is served: the standard operation, on the collection path it belongs to. */
interface Served {
  op: ImportOperation;
  operation: Operation;
  /** The collection path with its parameters taken out (`/{dataset}/{version}/records` -> `/records`). */
  base: string;
  /** Path parameters of the source path that the generated one does not have (all but the item's id). */
  dropped: string[];
}

/** A Route being planned: its entity, base path and served operations, before base paths are settled. */
export interface RoutePlan {
  entity: string;
  base: string;
  served: Served[];
  /** The standard endpoints (no source operations): nothing to note when the base moves. */
  standard: boolean;
}

const PARAM = /^\{[^}]+\}$/;
/** A path with its parameters unnamed and no trailing slash: `/a/{x}/` -> `/a/{}`. */
const shape = (p: string): string => p.replace(/\/+$/, "").replace(/\{[^}]*\}/g, "{}");

/**
 * How an API operation maps onto the standard operations of a collection: a path ending in a
 * parameter is an item (get, update, delete), unless a GET there returns a list (a collection keyed
 * by that parameter); any other path is the collection (list, create). Parameters other than the
 * item's id are taken out of the base path, so a resource keyed by several parameters
 * (`/{dataset}/{version}/records`, `/repositories/{owner}/{slug}/pulls`) is still served.
 */
function classify(op: ImportOperation, entity: string, itemParents: ReadonlySet<string>): Served | undefined {
  const segments = op.path.split("/").filter(Boolean);
  const method = op.method.toUpperCase();
  const last = segments[segments.length - 1];
  const item = last !== undefined && PARAM.test(last) && !(method === "GET" && op.returnsList === true);
  const collection = item ? segments.slice(0, -1) : segments;
  const dropped = collection.filter((s) => PARAM.test(s));
  // Below a parameter, a static segment is a sub-collection only when it names the entity
  // (`/{owner}/{slug}/pulls`) or has items of the entity below it (`/{dataset}/{version}/records/{id}`
  // of a Row); otherwise it is an action on the parent (`/pet/{id}/uploadImage`).
  const lastParam = collection.findLastIndex((s) => PARAM.test(s));
  const tail = collection.slice(lastParam + 1);
  const hasItems = itemParents.has(shape(`/${collection.join("/")}`));
  if (lastParam >= 0 && tail.length > 0 && !hasItems && !namesEntity(tail[tail.length - 1] as string, entity)) return undefined;
  const base = `/${collection.filter((s) => !PARAM.test(s)).join("/")}`;
  let operation: Operation | undefined;
  if (!item) operation = method === "GET" ? "list" : method === "POST" ? "create" : undefined;
  else
    operation = method === "GET" ? "get" : method === "PUT" || method === "PATCH" ? "update" : method === "DELETE" ? "delete" : undefined;
  if (!operation) return undefined;
  return { op, operation, base, dropped };
}

/**
 * The Route plan of an entity: the base path most of its operations belong to, each standard
 * operation once; what cannot be served there is noted. No operations: the standard endpoints.
 */
export function planRoute(entity: string, ops: readonly ImportOperation[], notes: ImportNote[]): RoutePlan | undefined {
  const defaultBase = `/${kebabCase(pluralize(entity))}`;
  if (ops.length === 0) return { entity, base: defaultBase, served: [], standard: true };
  // The collections with an item path among the entity's operations: `/a/{}/records` of `/a/{}/records/{}`.
  const itemParents = new Set(ops.map((o) => shape(o.path)).flatMap((p) => (p.endsWith("/{}") && p.length > 3 ? [p.slice(0, -3)] : [])));
  const classified = ops.map((op) => ({ op, served: classify(op, entity, itemParents) }));
  // The base most operations use, a top-level one (no parameter taken out) before one nested under
  // another resource: `/actions` rather than `/droplets/{id}/actions`.
  const counts = new Map<string, number>();
  const plain = new Map<string, number>();
  for (const c of classified) {
    if (!c.served) continue;
    counts.set(c.served.base, (counts.get(c.served.base) ?? 0) + 1);
    if (c.served.dropped.length === 0) plain.set(c.served.base, (plain.get(c.served.base) ?? 0) + 1);
  }
  const best = [...counts].sort(
    (a, b) => (plain.get(b[0]) ?? 0) - (plain.get(a[0]) ?? 0) || b[1] - a[1] || a[0].length - b[0].length || compareText(a[0], b[0]),
  )[0];
  const served: Served[] = [];
  const seen = new Set<Operation>();
  for (const { op, served: s } of classified) {
    const subject = `${op.method.toUpperCase()} ${op.path}`;
    if (!s || (best && s.base.startsWith(`${best[0]}/`))) {
      notes.push({
        kind: "skipped",
        subject,
        reason: `not one of the standard operations of ${best?.[0] ?? entity} (list, get, create, update, delete); not served`,
        location: op.location,
        fact: "operation",
      });
      continue;
    }
    if (best && s.base !== best[0]) {
      notes.push({
        kind: "skipped",
        subject,
        reason: `${entity} is served at ${best[0]}; this second path to it is not served`,
        location: op.location,
        fact: "operation",
      });
      continue;
    }
    if (seen.has(s.operation)) {
      notes.push({
        kind: "skipped",
        subject,
        reason: `a second ${s.operation} operation of ${entity}; not served`,
        location: op.location,
        fact: "operation",
      });
      continue;
    }
    seen.add(s.operation);
    served.push(s);
  }
  if (served.length === 0) return undefined;
  return { entity, base: best?.[0] ?? defaultBase, served, standard: false };
}

/**
 * Settles the base paths of all Routes: one that the generated app serves itself moves aside; two
 * Routes on one base are never refused, the one serving more operations keeps it and the others
 * move to `<base>-<entity>`; a base directly below another Route's base moves the same way (its
 * list would otherwise be taken for the other's item, `/things/{id}`). Every operation served at
 * another path than the source's is noted.
 */
export function settleBasePaths(plans: RoutePlan[], notes: ImportNote[]): void {
  const taken = new Set<string>();
  const ordered = [...plans].sort(
    (a, b) => b.served.length - a.served.length || a.base.length - b.base.length || compareText(a.entity, b.entity),
  );
  const key = (p: string): string => p.toLowerCase();
  const final = new Map<RoutePlan, string>();
  const why = new Map<RoutePlan, string[]>();
  for (const plan of ordered) {
    const defaultBase = `/${kebabCase(pluralize(plan.entity))}`;
    let base = plan.base === "" ? "/" : plan.base;
    const reasons: string[] = [];
    why.set(plan, reasons);
    if (!/^\/[A-Za-z0-9_\-/]*$/.test(base)) {
      // `/users/@me` becomes `/users/me`: no dash left at either end of a segment.
      const clean =
        base
          .replace(/[^A-Za-z0-9_\-/]+/g, "-")
          .replace(/(^|\/)-+|-+(?=\/|$)/g, "$1")
          .replace(/\/{2,}/g, "/") || "/";
      reasons.push(`${base} has characters a Route's base path cannot have`);
      base = clean;
    }
    if (reservedBasePath(base)) {
      const moved = reservedBasePath(defaultBase) ? `/api${defaultBase}` : defaultBase;
      reasons.push(`${base} is a path the generated app serves itself`);
      base = moved;
    }
    if (taken.has(key(base))) {
      const moved = freePath(`${base.replace(/\/$/, "")}-${kebabCase(plan.entity)}`, taken);
      reasons.push(`${base} is served by another entity's Route`);
      base = moved;
    }
    taken.add(key(base));
    final.set(plan, base);
  }
  // A base whose parent is another base: its GET list would match the parent's GET /{id}. Until
  // none is left: a move can put a base under another one that moved (Discord's /users/@me/guilds
  // moved beside /users/@me, which then moved beside /users). Each move takes a segment off a
  // path, so this ends.
  const bases = new Set([...final.values()].map(key));
  for (let moves = 1; moves > 0; ) {
    moves = 0;
    for (const plan of ordered) {
      const base = final.get(plan) as string;
      const parent = base.replace(/\/[^/]+$/, "");
      if (parent === "" || parent === base || !bases.has(key(parent))) continue;
      const moved = freePath(base.replace(/\/([^/]+)$/, "-$1"), bases);
      bases.delete(key(base));
      bases.add(key(moved));
      final.set(plan, moved);
      moves++;
      why.get(plan)?.push(`${base} lies under the Route at ${parent}, whose item path /{id} would take it`);
    }
  }
  // One note per Route, with every step that moved it.
  for (const plan of ordered) {
    const reasons = why.get(plan) ?? [];
    if (reasons.length > 0)
      notes.push({
        kind: "changed",
        subject: `${plan.entity} base path ${plan.base}`,
        reason: `${reasons.join("; ")}: the Route uses ${final.get(plan)}`,
        fact: "operation",
      });
  }
  for (const plan of plans) {
    plan.base = final.get(plan) as string;
    for (const s of plan.served) {
      const path = `${plan.base}${s.operation === "list" || s.operation === "create" ? "" : "/{id}"}`;
      const same = path.replace(/\{[^}]+\}/g, "{}") === s.op.path.replace(/\/+$/, "").replace(/\{[^}]+\}/g, "{}");
      if (same) continue;
      notes.push({
        kind: "changed",
        subject: `${s.op.method.toUpperCase()} ${s.op.path}`,
        reason: `served as ${s.op.method.toUpperCase() === "PUT" ? "PATCH" : s.op.method.toUpperCase()} ${path}${s.dropped.length > 0 ? ` (the path parameters ${s.dropped.join(", ")} are left out: a Route's base path holds no parameters)` : ""}`,
        location: s.op.location,
        fact: "operation",
      });
    }
  }
}

/** `pulls` names `pull`, `categories` names `category`: the segment is the entity's collection. */
function namesEntity(segment: string, entity: string): boolean {
  const s = segment.toLowerCase().replace(/[^a-z0-9]/g, "");
  const e = entity.toLowerCase().replace(/[^a-z0-9]/g, "");
  const p = pluralize(entity)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
  return s === e || s === p || s === `${e}s` || e.endsWith(s) || e.endsWith(s.replace(/e?s$/, ""));
}

function freePath(wanted: string, taken: ReadonlySet<string>): string {
  let p = wanted;
  for (let i = 2; taken.has(p.toLowerCase()); i++) p = `${wanted}-${i}`;
  return p;
}

/** The spec of the Route contract of a settled plan. */
export function routeSpec(plan: RoutePlan, domain: string): Record<string, unknown> {
  const { entity } = plan;
  const endpoints: Record<string, unknown>[] = [];
  if (plan.standard) {
    const all: [Operation, string, string][] = [
      ["list", "GET", "/"],
      ["get", "GET", "/{id}"],
      ["create", "POST", "/"],
      ["update", "PATCH", "/{id}"],
      ["delete", "DELETE", "/{id}"],
    ];
    for (const [op, method, path] of all)
      endpoints.push({ method, path, summary: `${humanize(op)} ${humanize(op === "list" ? pluralize(entity) : entity).toLowerCase()}` });
  } else {
    for (const s of plan.served) {
      const e: Record<string, unknown> = {
        method: s.op.method.toUpperCase(),
        path: s.operation === "list" || s.operation === "create" ? "/" : "/{id}",
      };
      if (s.op.summary) e.summary = s.op.summary.trim().split("\n")[0];
      endpoints.push(e);
    }
  }
  const spec: Record<string, unknown> = { entity: `entity/${domain}/${entity}` };
  if (plan.base !== `/${kebabCase(pluralize(entity))}`) spec.base_path = plan.base;
  spec.endpoints = endpoints;
  return spec;
}
