import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll } from "vitest";
import { REPO_ROOT } from "../support/cli.js";

export const FIXTURES = resolve(import.meta.dirname, "fixtures");
export const BASE_DOMAIN = join(FIXTURES, "base", "shop");

/** Temporary directories of this test file, removed after it (unless KEEP_TMP is set). */
const made: string[] = [];

/** Error types of the Healer's classification (src/healer/intake/classify.ts) that a contract can carry. */
export const CONTRACT_ERROR_TYPES = [
  "naming",
  "fqn_format",
  "graph_edge",
  "number_prefix",
  "missing_field",
  "schema_mismatch",
  "invalid_enum",
  "missing_reference",
  "dependency_cycle",
] as const;
export const TIER1 = new Set(["naming", "fqn_format", "graph_edge", "number_prefix"]);

/** The broken examples users see, `examples/broken/<type>/`: one small domain per error type, one error each. */
export function brokenExamples(): { type: string; dir: string }[] {
  return CONTRACT_ERROR_TYPES.map((type) => ({ type, dir: join(REPO_ROOT, "examples", "broken", type) }));
}

/**
 * One edit that breaks the base shop domain (customers, orders, a workflow, routes and pages) in
 * the way its name says, for tests that need more of a domain around the error than the broken
 * examples have.
 */
const SHOP_BREAKS = {
  missing_type: { file: "entities/customer.contract.yaml", from: "      type: email\n", to: "" },
  invalid_enum: { file: "entities/customer.contract.yaml", from: "type: email", to: "type: mail" },
  graph_edge: { file: "entities/order.contract.yaml", from: "graph_edge: PLACED_BY", to: "graph_edge: placedBy" },
} as const;

/** A temporary copy of the base shop domain with one error (see `SHOP_BREAKS`); the directory of the domain. */
export function brokenShop(kind: keyof typeof SHOP_BREAKS): string {
  const dir = mkdtempSync(join(tmpdir(), `charter-shop-${kind}-`));
  made.push(dir);
  cpSync(BASE_DOMAIN, dir, { recursive: true });
  const { file, from, to } = SHOP_BREAKS[kind];
  const path = join(dir, file);
  const text = readFileSync(path, "utf8");
  if (!text.includes(from)) throw new Error(`${file} of the base shop domain no longer contains ${JSON.stringify(from)}`);
  writeFileSync(path, text.replace(from, to));
  return dir;
}

export { NO_PROVIDER_ENV } from "../support/fake-llm.js";

afterAll(() => {
  if (process.env.KEEP_TMP) return;
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A temporary project root with `domains/<name>` copied from `domainDir` (or empty). */
export function makeProject(domainDir?: string, name = "shop"): string {
  const root = mkdtempSync(join(tmpdir(), "charter-healer-"));
  made.push(root);
  mkdirSync(join(root, "domains"), { recursive: true });
  if (domainDir) cpSync(domainDir, join(root, "domains", name), { recursive: true });
  return root;
}

/** Every file below `dir`, relative, sorted. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(abs, e.name), `${rel}${e.name}/`);
      else out.push(`${rel}${e.name}`);
    }
  };
  walk(dir, "");
  return out.sort();
}

import { spawn } from "node:child_process";
import { TSX_LOADER } from "../support/cli.js";

/**
 * Runs `charter` without blocking the test's event loop (spawnSync would), so a webhook receiver
 * served by the test process can answer the child.
 */
export function runCharterAsync(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ["--import", TSX_LOADER, join(REPO_ROOT, "src/cli/charter.ts"), ...args], {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: "1", ...options.env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ status: code ?? -1, stdout, stderr }));
  });
}
