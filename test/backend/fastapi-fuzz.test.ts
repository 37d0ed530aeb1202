import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { runSchemathesis } from "../support/schemathesis.js";
import { client } from "./http.js";

/** Fixed, so a failure found once is found again (schemathesis `--seed`). */
const SEED = 20_261_123;
interface FuzzCase {
  name: string;
  domainDir: string;
  backend: "postgres" | "memory";
  /** Whether the domain has auth: then the run logs in as the administrator first. */
  login: boolean;
  /** Test cases per operation and phase (`--max-examples`). */
  maxExamples: number;
  /** The least number of cases the run must generate. */
  minCases: number;
}

/**
 * The example with auth on both repositories (20 operations make well over 1,000 cases), and the
 * frontend tests' second domain (other field types, no auth, no workflow), so nothing passes
 * because it is tuned to the example.
 */
const CASES: FuzzCase[] = [
  { name: "helpdesk on postgres", domainDir: "examples/helpdesk", backend: "postgres", login: true, maxExamples: 22, minCases: 1000 },
  { name: "helpdesk on memory", domainDir: "examples/helpdesk", backend: "memory", login: true, maxExamples: 14, minCases: 1000 },
  {
    name: "library on postgres",
    domainDir: "test/fixtures/frontend/library",
    backend: "postgres",
    login: false,
    maxExamples: 20,
    minCases: 400,
  },
];

/**
 * Schemathesis (from PyPI, pinned in scripts/setup.sh) against the generated helpdesk with auth on,
 * on real PostgreSQL and on the memory backend: every check, the coverage, fuzzing and stateful
 * phases, seeded. It logs in first and passes the bearer token; it must find nothing.
 */
describe.each(CASES)("schemathesis finds no failure: $name", ({ domainDir, backend, login, maxExamples, minCases }) => {
  let root: string;
  let app: RunningBackend;
  let token: string | null = null;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `charter-fuzz-${backend}-`));
    const db = backend === "postgres" ? freshDatabase(`charter_fuzz_${domainDir.split("/").at(-1)}`) : "";
    app = await startGeneratedBackend({
      domainDir,
      outDir: join(root, "out"),
      backend,
      ...(db ? { databaseUrl: databaseUrl(db) } : {}),
    });
    if (login) {
      const answer = await client(app.url).post("/auth/login", { email: "admin@example.com", password: "admin-password" });
      expect(answer.status).toBe(200);
      token = answer.body.access_token as string;
    }
  });

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it(`runs at least ${minCases} cases with zero failures`, async () => {
    const { code, output, generated } = await runSchemathesis({
      baseUrl: app.url,
      dir: root,
      seed: SEED,
      maxExamples,
      ...(token ? { token } : {}),
    });
    const summary = output.slice(-4000);
    expect(code, summary).toBe(0);
    expect(generated, summary).toBeGreaterThanOrEqual(minCases);
    console.log(`schemathesis on ${backend}: ${/\d+ generated[^\n]*/.exec(output)?.[0]}`);
    expect(output).toMatch(/Stateful/);
    expect(output).not.toMatch(/\d+ failures?/);
    expect(app.logs()).not.toContain("Traceback");
  }, 480_000);
});
