import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend } from "../support/backend.js";
import { ensureVenvFromFile, runCasesInBackend } from "../support/python.js";

/**
 * /metrics writes the requests' figures itself (RequestFigures.exposition in app/observability.py)
 * and the rest with prometheus_client. The script compares that text with prometheus_client's own
 * rendering of the same figures, byte for byte, on series whose route templates need escaping and
 * whose values need Go's float notation; then /metrics with the whole registry, which the
 * METRICS_PORT listener renders. It prints the name of each case that passed.
 */
const CASES = `
import asyncio, random
from prometheus_client import CollectorRegistry, generate_latest
from app import observability

ROUTES = ["/items", "/items/{record_id}", 'a "quoted" route', "back\\\\slash", "new\\nline", "ünïcode/{x}", ""]

def figures():
    figures = observability.RequestFigures()
    rng = random.Random(7)
    for _ in range(3000):
        figures.observe(
            rng.choice(["GET", "POST", "PATCH", "DELETE"]),
            rng.choice(ROUTES),
            rng.choice([200, 201, 404, 422, 500]),
            rng.choice([0.0, 1e-9, 0.001, 0.0025, 0.00251, 0.3, 10.0, 10.5, 3600.0]),
        )
    figures.observe("GET", "/many", 200, 12345678.9)
    for _ in range(1_234_567 - 1):
        figures.observe("GET", "/many", 200, 0.002)
    return figures

def requests_as_prometheus_client_writes_them():
    own = figures()
    registry = CollectorRegistry()
    registry.register(own)
    expected = generate_latest(registry).decode()
    assert own.exposition() == expected, "exposition() differs from generate_latest()"
    assert '\\\\"quoted\\\\"' in expected and "new\\\\nline" in expected and "e+06" in expected, expected[:400]

def metrics_as_the_metrics_port_writes_them():
    for method, route, status in (("GET", "/items", 200), ("POST", 'x"y', 422)):
        observability.REQUEST_FIGURES.observe(method, route, status, 0.004)
    observability.EVENTS.labels(state="pending").set(3)
    observability.HEALER_REPORTS.labels(result="sent").inc()
    body = asyncio.run(observability.render_metrics())
    assert body == generate_latest(observability.REGISTRY), "/metrics differs from the registry's rendering"
    assert b'outbox_events{state="pending"} 3.0' in body and b'route="x\\\\"y"' in body, body[-600:]

for case in [requests_as_prometheus_client_writes_them, metrics_as_the_metrics_port_writes_them]:
    case()
    print(case.__name__, flush=True)
`;

describe("the /metrics text of the generated app", () => {
  let outDir: string;
  let backendDir: string;

  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), "charter-metrics-"));
    backendDir = generateBackend("bench/backend-domain", outDir);
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
  });

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it("is prometheus_client's rendering of the same figures, byte for byte", () => {
    const env = { DATABASE_BACKEND: "memory" };
    expect(runCasesInBackend(backendDir, "metrics_cases.py", CASES, [], env)).toEqual([
      "requests_as_prometheus_client_writes_them",
      "metrics_as_the_metrics_port_writes_them",
    ]);
  });
});
