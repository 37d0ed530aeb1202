/**
 * Healer benchmark: ingest throughput into the SQLite store with dedup on, and tier-1 latency from
 * a report to the fix applied and the code regenerated, on a 20-entity domain.
 * Run: npx tsx bench/healer.ts
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkDomain } from "../src/compiler/index.js";
import { Healer } from "../src/healer/index.js";

const ENTITIES = 20;
const INGEST_REPORTS = 20_000;
const DISTINCT_ERRORS = 50;
const LATENCY_SAMPLES = Number(process.env.HEALER_BENCH_SAMPLES ?? 30);

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

function writeDomain(dir: string): void {
  for (const sub of ["entities", "routes", "pages"]) mkdirSync(join(dir, sub), { recursive: true });
  for (let i = 0; i < ENTITIES; i++) {
    const n = `item_${String(i).padStart(2, "0")}`;
    const ref =
      i === 0
        ? ""
        : `    parent_id:
      type: uuid
      references:
        entity: entity/bench/item_${String(i - 1).padStart(2, "0")}
        display: title
        graph_edge: CHILD_OF
`;
    writeFileSync(
      join(dir, "entities", `${n}.contract.yaml`),
      `# Entity ${i} of the benchmark domain.
apiVersion: charter/v1
kind: Entity
metadata:
  name: ${n}
  domain: bench
spec:
  number_prefix: IT
  mixins:
    - mixin/stdlib/identifiable
    - mixin/stdlib/timestamped
  fields:
    title:
      type: string
      required: true
    status:
      type: string
      enum: [open, closed]
      default: open
    amount:
      type: number
    notes:
      type: text
${ref}`,
    );
    writeFileSync(
      join(dir, "routes", `${n}_api.contract.yaml`),
      `apiVersion: charter/v1
kind: Route
metadata:
  name: ${n}_api
  domain: bench
spec:
  entity: entity/bench/${n}
  endpoints:
    - method: GET
      path: /
    - method: POST
      path: /
    - method: PATCH
      path: /{id}
`,
    );
    writeFileSync(
      join(dir, "pages", `${n}s.contract.yaml`),
      `apiVersion: charter/v1
kind: Page
metadata:
  name: ${n}s
  domain: bench
spec:
  route: /${n.replace("_", "-")}s
  entity: entity/bench/${n}
  generation_tier: mechanical
  views:
    - type: table
      default: true
      columns: [number, title, status]
`,
    );
  }
}

async function benchIngest(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "charter-bench-ingest-"));
  const healer = new Healer({ projectRoot: root, console: null, env: {} });
  const started = performance.now();
  for (let i = 0; i < INGEST_REPORTS; i++) {
    const k = i % DISTINCT_ERRORS;
    healer.report({
      source: "runtime",
      contract_fqn: `entity/bench/item_${String(k % ENTITIES).padStart(2, "0")}`,
      error: `KeyError: 'field_${k}' while handling request ${crypto.randomUUID()}`,
      context: { status_code: 500, request_path: `/items/${i}`, method: "GET" },
    });
  }
  const seconds = (performance.now() - started) / 1000;
  const tickets = healer.store.list().length;
  await healer.close();
  rmSync(root, { recursive: true, force: true });
  console.log(
    `ingest: ${INGEST_REPORTS} reports (${DISTINCT_ERRORS} distinct) in ${seconds.toFixed(2)} s = ${Math.round(INGEST_REPORTS / seconds)} reports/s -> ${tickets} tickets`,
  );
}

async function benchTier1(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "charter-bench-tier1-"));
  const domain = join(root, "domains", "bench");
  writeDomain(domain);
  const check = checkDomain(domain);
  if (check.errors > 0) throw new Error(`benchmark domain is invalid: ${check.findings[0]?.message}`);
  const healer = new Healer({ projectRoot: root, console: null, env: {} });
  // Warm up: first generation writes the whole runtime/ tree and loads every module.
  await healer.fix();
  const samples: number[] = [];
  let regenerated = 0;
  for (let s = 0; s < LATENCY_SAMPLES; s++) {
    const i = 1 + (s % (ENTITIES - 1));
    const n = `item_${String(i).padStart(2, "0")}`;
    const file = join(domain, "entities", `${n}.contract.yaml`);
    const wrong = `childOf${s}`;
    writeFileSync(file, readFileSync(file, "utf8").replace(/graph_edge: \w+/, `graph_edge: ${wrong}`));
    const started = performance.now();
    const { ticket } = healer.report({
      source: "validation",
      contract_fqn: `entity/bench/${n}`,
      error: `'${wrong}' does not match '^[A-Z][A-Z0-9_]*$'`,
      context: {
        source_path: `domains/bench/entities/${n}.contract.yaml`,
        pointer: "/spec/fields/parent_id/references/graph_edge",
        scan_root: "domains",
      },
    });
    const done = await healer.processTicket(ticket.id);
    samples.push(performance.now() - started);
    if (done.status !== "applied") throw new Error(`sample ${s}: ticket ended ${done.status}: ${done.resolution_note}`);
    regenerated = Number(/regenerated (\d+) file/.exec(done.resolution_note)?.[1] ?? 0);
  }
  await healer.close();
  rmSync(root, { recursive: true, force: true });
  samples.sort((a, b) => a - b);
  console.log(
    `tier 1 (report -> applied + regenerated, ${ENTITIES} entities, ${check.contracts.length} contracts, ${regenerated} generated files): ` +
      `p50 ${percentile(samples, 50).toFixed(0)} ms, p95 ${percentile(samples, 95).toFixed(0)} ms, max ${percentile(samples, 100).toFixed(0)} ms over ${samples.length} samples`,
  );
}

console.log("Healer benchmark (targets: ingest >= 2000 reports/s, tier 1 p50 < 500 ms)");
await benchIngest();
await benchTier1();
