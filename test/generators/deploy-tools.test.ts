import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDomain } from "../../src/compiler/compile-path.js";
import { GENERATORS, generateTarget } from "../../src/generators/registry.js";
import { writeFiles } from "../../src/generators/writer.js";
import { ensureVenv, VENV_BIN } from "../support/python.js";
import { randomDomain } from "../support/random-domain.js";

/**
 * The deployment files as their own tools read them (issue 40), on the example and a seeded draw
 * of random domains: `docker compose config` resolves and validates the compose file, and
 * `kubernetes-validate --strict` checks every Kubernetes manifest against the API's schemas
 * (unknown fields are errors). test/docker and test/k8s hold the example's deeper checks.
 */
const SEED = 40_041;
const RANDOM = 4;
const KUBERNETES_VALIDATE = "kubernetes-validate==1.37.0";
const KUBERNETES_VERSION = "1.33.0";
/** What a user puts in .env: the secrets compose requires. */
const SECRETS = { AUTH_SECRET: "a".repeat(64), POSTGRES_PASSWORD: "p".repeat(32), SVC_HEALER_TOKEN: "t".repeat(32) };

describe("the deployment files pass docker compose config and kubernetes-validate --strict", () => {
  let root: string;
  const outs: { name: string; dir: string }[] = [];

  beforeAll(() => {
    ensureVenv([KUBERNETES_VALIDATE]);
    root = mkdtempSync(join(tmpdir(), "charter-deploy-tools-"));
    const domains = [{ name: "helpdesk", dir: "examples/helpdesk" }];
    fc.sample(randomDomain(), { numRuns: RANDOM, seed: SEED }).forEach(({ files }, i) => {
      const dir = join(root, `random-${i}-domain`);
      for (const [rel, text] of Object.entries(files)) {
        mkdirSync(join(dir, rel, ".."), { recursive: true });
        writeFileSync(join(dir, rel), text);
      }
      domains.push({ name: `random-${i}`, dir });
    });
    for (const { name, dir } of domains) {
      const { ir, findings } = checkDomain(dir);
      if (!ir) throw new Error(`${name} does not compile: ${findings.map((f) => f.message).join("; ")}`);
      const out = join(root, name);
      for (const { target } of GENERATORS) writeFiles(out, generateTarget(ir, target, out));
      outs.push({ name, dir: out });
    }
  }, 120_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("docker compose config accepts every compose file", () => {
    const envFile = join(root, "secrets.env");
    writeFileSync(
      envFile,
      Object.entries(SECRETS)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(""),
    );
    for (const { name, dir } of outs) {
      const r = spawnSync("docker", ["compose", "-p", `charter-h40-${name}`, "--env-file", envFile, "config", "--format", "json"], {
        cwd: dir,
        encoding: "utf8",
        timeout: 60_000,
      });
      if (r.error) throw r.error;
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      const services = Object.keys((JSON.parse(r.stdout) as { services: object }).services);
      expect(services, name).toEqual(expect.arrayContaining(["db", "app", "healer"]));
    }
  });

  it("kubernetes-validate --strict accepts every manifest, none skipped", () => {
    for (const { name, dir } of outs) {
      const manifests = readdirSync(join(dir, "k8s"), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".yaml") && !f.endsWith("kustomization.yaml"))
        .map((f) => join("k8s", f));
      expect(manifests.length, name).toBeGreaterThan(3);
      const r = spawnSync(join(VENV_BIN, "kubernetes-validate"), ["--strict", "-k", KUBERNETES_VERSION, ...manifests], {
        cwd: dir,
        encoding: "utf8",
        timeout: 120_000,
      });
      const output = `${r.stdout}${r.stderr}`;
      expect(r.status, `${name}: ${output}`).toBe(0);
      expect(output, name).not.toMatch(/skipping|unknown/i);
      expect(output.match(/passed for resource/g)?.length ?? 0, name).toBeGreaterThanOrEqual(manifests.length);
    }
  }, 180_000);
});
