import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { GeneratedFile } from "../generators/index.js";

type Json = Record<string, unknown>;

/** One API change, with oasdiff's check id and level (error: breaking; warning, info: not). */
export interface ApiChange {
  operation: string;
  id: string;
  level: "error" | "warning" | "info";
  text: string;
}

export interface ApiPlan {
  operationsAdded: string[];
  operationsRemoved: string[];
  changes: ApiChange[];
  breaking: boolean;
  counts: ApiCounts;
}

/**
 * The changes counted the way a reviewer weighs them: operations added, removed or changed (an
 * operation both documents have, with at least one change), and property changes, breaking or not.
 */
export interface ApiCounts {
  operations: { added: number; removed: number; changed: number };
  properties: { added: number; removed: number; changed: number; breaking: number };
}

/** Counts the changes of a comparison by oasdiff's check ids: `*-property-added`, `*-property-removed`, the rest of `*-property-*`. */
export function countApiChanges(
  operationsAdded: readonly string[],
  operationsRemoved: readonly string[],
  changes: readonly ApiChange[],
): ApiCounts {
  const whole = new Set([...operationsAdded, ...operationsRemoved]);
  const changed = new Set(changes.filter((c) => !whole.has(c.operation)).map((c) => c.operation));
  const properties = { added: 0, removed: 0, changed: 0, breaking: 0 };
  for (const c of changes) {
    if (!c.id.includes("property")) continue;
    if (/property-added$|^new-(required|optional)-request-property$/.test(c.id)) properties.added++;
    else if (/property-removed$/.test(c.id)) properties.removed++;
    else properties.changed++;
    if (c.level === "error") properties.breaking++;
  }
  return { operations: { added: operationsAdded.length, removed: operationsRemoved.length, changed: changed.size }, properties };
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const BACKEND = "backend/";

/**
 * The OpenAPI document of a generated FastAPI backend, as the app itself builds it (`app.openapi()`),
 * so the comparison sees exactly what clients see. Null when `dir` holds no backend.
 */
export function openApiOf(dir: string): Json | null {
  if (!existsSync(join(dir, "app/main.py"))) return null;
  const r = spawnSync(pythonCommand(), ["-W", "ignore", "-c", OPENAPI_SCRIPT], { cwd: dir, encoding: "utf8", ...openApiRun() });
  if (r.status !== 0) throw openApiError(dir, r.stderr || r.error?.message || "");
  return JSON.parse(r.stdout) as Json;
}

/**
 * `openApiOf` without blocking the event loop: the Healer plans each proposal while it serves
 * reports, and a Python start of a second or more would stall every request meanwhile.
 */
export async function openApiOfAsync(dir: string): Promise<Json | null> {
  if (!existsSync(join(dir, "app/main.py"))) return null;
  try {
    const { stdout } = await promisify(execFile)(pythonCommand(), ["-W", "ignore", "-c", OPENAPI_SCRIPT], {
      cwd: dir,
      encoding: "utf8",
      ...openApiRun(),
    });
    return JSON.parse(stdout) as Json;
  } catch (e) {
    throw openApiError(dir, (e as { stderr?: string }).stderr || (e as Error).message);
  }
}

const OPENAPI_SCRIPT = "import json, sys\nsys.path.insert(0, '.')\nfrom app.main import app\nprint(json.dumps(app.openapi()))\n";

function openApiRun(): { maxBuffer: number; env: NodeJS.ProcessEnv } {
  // Development mode accepts the placeholder secret; importing the app connects to nothing.
  return { maxBuffer: 1 << 28, env: { ...process.env, APP_ENV: "development", PYTHONDONTWRITEBYTECODE: "1" } };
}

function openApiError(dir: string, stderr: string): Error {
  return new Error(`could not build the OpenAPI document of ${dir}: ${stderr.trim().split("\n").pop()}`);
}

/** CHARTER_PYTHON, else the project's venv (.cache/venv), else python3 on the PATH. */
function pythonCommand(): string {
  if (process.env.CHARTER_PYTHON) return process.env.CHARTER_PYTHON;
  const venv = fileURLToPath(new URL("../../.cache/venv/bin/python", import.meta.url));
  return existsSync(venv) ? venv : "python3";
}

/**
 * The API change a regeneration makes: the backend on disk under `output` against the backend the
 * generators would write (materialised in a scratch folder, never in `output`). Null when the
 * target generates no FastAPI backend.
 */
export function planApi(output: string, files: readonly GeneratedFile[]): ApiPlan | null {
  return withBackend(files, (scratch) => {
    const next = openApiOf(join(scratch, "backend")) ?? { paths: {} };
    const prev = openApiOf(join(output, "backend")) ?? { paths: {} };
    return diffOpenApi(prev, next);
  });
}

/** `planApi` without blocking the event loop (see `openApiOfAsync`). */
export async function planApiAsync(output: string, files: readonly GeneratedFile[]): Promise<ApiPlan | null> {
  return withBackend(files, async (scratch) => {
    const [next, prev] = await Promise.all([openApiOfAsync(join(scratch, "backend")), openApiOfAsync(join(output, "backend"))]);
    return diffOpenApi(prev ?? { paths: {} }, next ?? { paths: {} });
  });
}

/**
 * Runs `fn` on a scratch folder holding the backend the generators would write, removed after
 * (awaited when `fn` is async); null without `fn` when the files hold no FastAPI backend.
 */
function withBackend<T>(files: readonly GeneratedFile[], fn: (scratch: string) => T): T | null {
  const backend = files.filter((f) => f.path.startsWith(BACKEND));
  if (!backend.some((f) => f.path === `${BACKEND}app/main.py`)) return null;
  const scratch = mkdtempSync(join(tmpdir(), "charter-plan-api-"));
  const cleanup = (): void => rmSync(scratch, { recursive: true, force: true });
  let result: T;
  try {
    for (const f of backend) {
      const to = join(scratch, f.path);
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, f.content);
    }
    result = fn(scratch);
  } catch (e) {
    cleanup();
    throw e;
  }
  if (result instanceof Promise) return result.finally(cleanup) as T;
  cleanup();
  return result;
}

/**
 * Compares two OpenAPI documents the way oasdiff's checks classify changes: what a client already
 * sends must still be accepted (request), what it already reads must still come (response).
 */
export function diffOpenApi(prev: Json, next: Json): ApiPlan {
  const ops = (doc: Json): Map<string, Json> => {
    const out = new Map<string, Json>();
    for (const [path, item] of Object.entries((doc.paths as Record<string, Json>) ?? {})) {
      for (const m of METHODS) if (item[m]) out.set(`${m.toUpperCase()} ${path}`, item[m] as Json);
    }
    return out;
  };
  const before = ops(prev);
  const after = ops(next);
  const changes: ApiChange[] = [];
  const operationsAdded = [...after.keys()].filter((k) => !before.has(k)).sort();
  const operationsRemoved = [...before.keys()].filter((k) => !after.has(k)).sort();
  for (const op of operationsRemoved)
    changes.push({ operation: op, id: "api-removed-without-deprecation", level: "error", text: "operation removed" });
  for (const op of operationsAdded) changes.push({ operation: op, id: "endpoint-added", level: "info", text: "operation added" });
  for (const [op, a] of after) {
    const b = before.get(op);
    if (!b) continue;
    const add = (id: string, level: ApiChange["level"], text: string): void => {
      changes.push({ operation: op, id, level, text });
    };
    const reqB = requestSchema(prev, b);
    const reqA = requestSchema(next, a);
    if (reqB && reqA) compareObject(prev, next, reqB, reqA, "request", "", add);
    else if (!reqB && reqA && (a.requestBody as Json | undefined)?.required === true)
      add("request-body-became-required", "error", "a request body is now required");
    const resB = responseSchema(prev, b);
    const resA = responseSchema(next, a);
    if (resB && resA) compareObject(prev, next, resB, resA, "response", "", add);
  }
  return {
    operationsAdded,
    operationsRemoved,
    changes,
    breaking: changes.some((c) => c.level === "error"),
    counts: countApiChanges(operationsAdded, operationsRemoved, changes),
  };
}

function resolveRef(doc: Json, s: unknown): Json | null {
  let node = s as Json | undefined;
  for (let i = 0; node && typeof node.$ref === "string" && i < 20; i++) {
    node = (node.$ref as string)
      .replace(/^#\//, "")
      .split("/")
      .reduce<unknown>((n, seg) => (n as Json | undefined)?.[seg], doc) as Json | undefined;
  }
  if (!node) return null;
  // Pydantic writes an optional field as anyOf [the type, null]: the type is what is compared.
  const any = node.anyOf as Json[] | undefined;
  if (Array.isArray(any)) {
    const real = any.filter((x) => x.type !== "null");
    if (real.length === 1) return { ...resolveRef(doc, real[0]), nullable: true };
  }
  return node;
}

function requestSchema(doc: Json, op: Json): Json | null {
  const content = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.["application/json"] as Json | undefined;
  return content ? resolveRef(doc, content.schema) : null;
}

function responseSchema(doc: Json, op: Json): Json | null {
  const responses = (op.responses as Record<string, Json>) ?? {};
  const ok = Object.keys(responses).find((s) => /^2\d\d$/.test(s));
  const content = ok ? ((responses[ok]?.content as Json | undefined)?.["application/json"] as Json | undefined) : undefined;
  return content ? resolveRef(doc, content.schema) : null;
}

type Add = (id: string, level: ApiChange["level"], text: string) => void;

function compareObject(
  prevDoc: Json,
  nextDoc: Json,
  b: Json,
  a: Json,
  side: "request" | "response",
  at: string,
  add: Add,
  depth = 0,
): void {
  if (depth > 6) return;
  const pb = (b.properties as Record<string, unknown>) ?? {};
  const pa = (a.properties as Record<string, unknown>) ?? {};
  const reqB = new Set((b.required as string[]) ?? []);
  const reqA = new Set((a.required as string[]) ?? []);
  const name = (p: string): string => (at ? `${at}/${p}` : p);
  for (const p of Object.keys(pb)) {
    if (p in pa) continue;
    if (side === "request") add("request-property-removed", "warning", `request property ${name(p)} removed`);
    else
      add(
        reqB.has(p) ? "response-required-property-removed" : "response-optional-property-removed",
        reqB.has(p) ? "error" : "warning",
        `response property ${name(p)} removed`,
      );
  }
  for (const p of Object.keys(pa)) {
    if (!(p in pb)) {
      if (side === "request") {
        add(
          reqA.has(p) ? "new-required-request-property" : "new-optional-request-property",
          reqA.has(p) ? "error" : "info",
          `request property ${name(p)} added`,
        );
      } else add("response-property-added", "info", `response property ${name(p)} added`);
      continue;
    }
    if (side === "request" && !reqB.has(p) && reqA.has(p))
      add("request-property-became-required", "error", `request property ${name(p)} became required`);
    if (side === "request" && reqB.has(p) && !reqA.has(p))
      add("request-property-became-optional", "info", `request property ${name(p)} became optional`);
    if (side === "response" && reqB.has(p) && !reqA.has(p))
      add("response-property-became-optional", "error", `response property ${name(p)} became optional`);
    const sb = resolveRef(prevDoc, pb[p]);
    const sa = resolveRef(nextDoc, pa[p]);
    if (sb && sa) compareSchema(prevDoc, nextDoc, sb, sa, side, name(p), add, depth + 1);
  }
}

/** A property's own constraints: tighter where clients send is breaking, looser where they read is a warning. */
function compareSchema(
  prevDoc: Json,
  nextDoc: Json,
  b: Json,
  a: Json,
  side: "request" | "response",
  prop: string,
  add: Add,
  depth: number,
): void {
  const where = `${side} property ${prop}`;
  if (b.type !== a.type) {
    add(`${side}-property-type-changed`, "error", `${where}: type ${String(b.type)} -> ${String(a.type)}`);
    return;
  }
  // Upper bounds: lowering one refuses requests that passed; raising one may send clients bigger values.
  for (const [key, label] of [
    ["maxLength", "max-length"],
    ["maximum", "max"],
    ["maxItems", "max-items"],
  ] as const) {
    const x = b[key] as number | undefined;
    const y = a[key] as number | undefined;
    if (x === y) continue;
    const widened = y === undefined || (x !== undefined && y > x);
    const verb = y === undefined ? "unset" : widened ? "increased" : "decreased";
    const level = side === "request" ? (widened ? "info" : "error") : widened ? "warning" : "info";
    add(`${side}-property-${label}-${verb}`, level, `${where}: ${key} ${x ?? "none"} -> ${y ?? "none"}`);
  }
  for (const [key, label] of [
    ["minLength", "min-length"],
    ["minimum", "min"],
    ["minItems", "min-items"],
  ] as const) {
    const x = b[key] as number | undefined;
    const y = a[key] as number | undefined;
    if (x === y) continue;
    const widened = y === undefined || (x !== undefined && y < x);
    const verb = y === undefined ? "unset" : widened ? "decreased" : "increased";
    const level = side === "request" ? (widened ? "info" : "error") : widened ? "warning" : "info";
    add(`${side}-property-${label}-${verb}`, level, `${where}: ${key} ${x ?? "none"} -> ${y ?? "none"}`);
  }
  const eb = Array.isArray(b.enum) ? (b.enum as unknown[]).map(String) : null;
  const ea = Array.isArray(a.enum) ? (a.enum as unknown[]).map(String) : null;
  if (eb && ea) {
    for (const v of eb.filter((v) => !ea.includes(v))) {
      add(`${side}-property-enum-value-removed`, side === "request" ? "error" : "info", `${where}: enum value ${v} removed`);
    }
    for (const v of ea.filter((v) => !eb.includes(v))) {
      add(`${side}-property-enum-value-added`, side === "request" ? "info" : "warning", `${where}: enum value ${v} added`);
    }
  }
  if (b.pattern !== a.pattern) add(`${side}-property-pattern-changed`, side === "request" ? "error" : "info", `${where}: pattern changed`);
  if (b.type === "object" || b.properties) compareObject(prevDoc, nextDoc, b, a, side, prop, add, depth);
  if (b.type === "array" && b.items && a.items) {
    const ib = resolveRef(prevDoc, b.items);
    const ia = resolveRef(nextDoc, a.items);
    if (ib && ia) compareSchema(prevDoc, nextDoc, ib, ia, side, `${prop}/items`, add, depth + 1);
  }
}
