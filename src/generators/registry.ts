import type { DomainIR } from "../compiler/index.js";
import { dockerGenerator } from "./docker/index.js";
import { fastapiGenerator } from "./fastapi/index.js";
import { formatGenerated } from "./format.js";
import { k8sGenerator } from "./k8s/index.js";
import { migrationsGenerator } from "./migrations/index.js";
import { nextjsGenerator } from "./nextjs/index.js";
import { postgresGenerator } from "./postgres/index.js";
import { testsGenerator } from "./tests/index.js";
import type { GeneratedFile, Generator } from "./types.js";
import { readExisting } from "./writer.js";

/**
 * Every generation target, by name. Output layout under the output root (default `runtime/`):
 *   backend/            fastapi-prod (backend/app/..., backend/requirements.txt)
 *   backend/db/         postgres (schema.sql) and migrations (migrations/NNNN_*.sql, snapshot)
 *   frontend/           nextjs
 *   ./                  docker (compose file, .env.example; backend/ and healer/ Dockerfiles)
 *   tests/              tests (black-box pytest suite)
 *   k8s/                k8s (manifests and a kustomization; not part of `all`)
 * Each generator module adds itself to this list.
 */
export const GENERATORS: readonly Generator[] = [
  fastapiGenerator,
  postgresGenerator,
  migrationsGenerator,
  nextjsGenerator,
  dockerGenerator,
  testsGenerator,
  k8sGenerator,
];

/** `all`: backend, database, migrations and frontend (what `forge generate` builds by default), plus docker and tests. */
export const ALL_TARGETS = ["fastapi-prod", "postgres", "migrations", "nextjs", "docker", "tests"] as const;

export function targetNames(): string[] {
  return [...GENERATORS.map((g) => g.target), "all"];
}

export function resolveTargets(target: string): Generator[] {
  if (target === "all") return GENERATORS.filter((g) => (ALL_TARGETS as readonly string[]).includes(g.target));
  const g = GENERATORS.find((x) => x.target === target);
  if (!g) throw new UnknownTargetError(target);
  return [g];
}

export class UnknownTargetError extends Error {
  constructor(readonly target: string) {
    super(`unknown target ${JSON.stringify(target)}; known targets: ${targetNames().join(", ")}`);
  }
}

/**
 * Runs the generators of `target` against the IR, reading what they ask for from `outDir`, then the
 * format stage (format.ts) over what they produced.
 */
export function generateTarget(ir: DomainIR, target: string, outDir: string): GeneratedFile[] {
  return mergeOutputs([runGenerators(ir, resolveTargets(target), outDir)]);
}

/**
 * The files of some generators, formatted, each marked with its target: one thread's share of a
 * generation (parallel.ts runs the shares of one generation on two threads).
 */
export function runGenerators(ir: DomainIR, generators: readonly Generator[], outDir: string): GeneratedFile[] {
  const files: GeneratedFile[] = [];
  for (const g of generators) {
    const existing = readExisting(outDir, g.reads?.(ir) ?? []);
    for (const f of g.generate({ ir, existing })) files.push({ ...f, target: g.target });
  }
  return formatGenerated(files);
}

/**
 * One generation's files from its shares, in the registry's order of targets whichever thread made
 * them. The first target to write a path owns it (docker repeats backend/requirements.txt of
 * fastapi-prod).
 */
export function mergeOutputs(shares: readonly (readonly GeneratedFile[])[]): GeneratedFile[] {
  const rank = new Map(GENERATORS.map((g, i) => [g.target, i]));
  const rankOf = (f: GeneratedFile): number => rank.get(f.target ?? "") ?? 0;
  // A stable sort: each target's files stay in the order its generator gave them.
  const ordered = shares.flat().sort((a, b) => rankOf(a) - rankOf(b));
  const files = new Map<string, GeneratedFile>();
  for (const f of ordered) if (!files.has(f.path)) files.set(f.path, f);
  return [...files.values()];
}
