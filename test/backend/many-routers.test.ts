import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeSyntheticDomain } from "../../bench/synthetic-domain.mjs";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";

// FastAPI nests the app's lifespan one level deeper per included router; DigitalOcean's spec (724
// resources, from the import corpus) made an app whose start-up overflowed Python's stack. A domain
// with more routers than that stack allows must start and serve its last resource.
const ROUTERS = 520;
const work = mkdtempSync(join(tmpdir(), "charter-many-routers-"));
let backend: RunningBackend | undefined;
afterAll(async () => {
  await backend?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe(`a generated app with ${ROUTERS} routers`, () => {
  it("starts, and serves its first and last resources", async () => {
    const domain = join(work, "domain");
    writeSyntheticDomain(domain, ROUTERS, { workflow: 0, route: 1, page: 0 });
    backend = await startGeneratedBackend({ domainDir: domain, outDir: join(work, "out"), backend: "memory" });
    expect((await fetch(`${backend.url}/health`)).status).toBe(200);
    const last = String(ROUTERS - 1).padStart(4, "0");
    for (const path of ["/thing-0000s", `/thing-${last}s`]) {
      const r = await fetch(`${backend.url}${path}`);
      expect(r.status, path).toBe(200);
    }
  }, 300_000);
});
