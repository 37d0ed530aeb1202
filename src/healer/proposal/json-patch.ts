import { toPointer } from "../../contracts/index.js";
import type { Change } from "../types.js";

/**
 * JSON Patch operations (with `before`) that turn `before` into `after`. Objects are compared key
 * by key; arrays element by element when their lengths match, otherwise replaced whole, which keeps
 * a reviewer's view short for the small edits a contract fix makes.
 */
export function diffJson(before: unknown, after: unknown, path: (string | number)[] = []): Change[] {
  if (deepEqual(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const out: Change[] = [];
    for (const k of Object.keys(before)) {
      if (!(k in after)) out.push({ op: "remove", path: toPointer([...path, k]), before: before[k] });
    }
    for (const [k, v] of Object.entries(after)) {
      if (!(k in before)) out.push({ op: "add", path: toPointer([...path, k]), value: v });
      else out.push(...diffJson(before[k], v, [...path, k]));
    }
    return out;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((b, i) => diffJson(b, after[i], [...path, i]));
  }
  return [{ op: "replace", path: toPointer(path), value: after, before }];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}
