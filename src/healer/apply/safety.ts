import { realpathSync } from "node:fs";
import { relative, sep } from "node:path";

/** Longest `contract_fqn` a report may carry; an FQN is three short names. */
export const MAX_FQN_LENGTH = 256;

/**
 * Why a reported `contract_fqn` is refused, or null. An FQN names a contract, it never addresses a
 * file: anything that could be read as a path (`..` or `.` segments, more than three parts, a
 * leading `/`, a backslash, NUL or other control characters) is refused as it is, never normalised
 * into some other FQN. A name that merely breaks the naming rule (`entity/shop/OrderItem`) is a
 * legitimate report of exactly that error and passes.
 */
export function unsafeFqnReason(fqn: string): string | null {
  if (fqn.length > MAX_FQN_LENGTH) return `longer than ${MAX_FQN_LENGTH} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here
  if (/[\u0000-\u001f\u007f]/.test(fqn)) return "contains a control character";
  if (fqn.startsWith("/")) return "starts with /";
  if (fqn.includes("\\")) return "contains a backslash";
  const parts = fqn.split("/");
  if (parts.length > 3) return `has ${parts.length} parts; an FQN is kind/domain/name`;
  if (parts.some((p) => p === ".." || p === ".")) return "contains a . or .. segment";
  if (parts.some((p) => p === "")) return "has an empty part";
  return null;
}

/**
 * Whether `abs` (after following every symlink) lies inside `dir` (also resolved): a contract the
 * Healer rewrites must be a file of the project's domains directory, not one a symlink leads to.
 */
export function realPathInside(abs: string, dir: string): { ok: true } | { ok: false; real: string; base: string } {
  let real: string;
  let base: string;
  try {
    real = realpathSync(abs);
    base = realpathSync(dir);
  } catch {
    return { ok: false, real: abs, base: dir };
  }
  const rel = relative(base, real);
  const inside = rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep);
  return inside ? { ok: true } : { ok: false, real, base };
}
