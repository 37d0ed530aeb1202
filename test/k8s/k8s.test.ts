import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { checkDomain } from "../../src/compiler/index.js";
import type { DomainIR } from "../../src/compiler/ir.js";
import { GENERATED_NOTICE } from "../../src/generators/header.js";
import { generateK8s } from "../../src/generators/k8s/index.js";
import { writeFiles } from "../../src/generators/writer.js";
import { generateBackend, TEST_AUTH_SECRET } from "../support/backend.js";
import { entityYaml, writeDomain } from "../support/domain.js";
import { expectGolden } from "../support/golden.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { ensureVenv, ensureVenvFromFile, VENV_BIN, VENV_PYTHON } from "../support/python.js";

/** The validator of the Kubernetes OpenAPI schemas (strict: unknown properties are errors), pinned. */
const KUBERNETES_VALIDATE = "kubernetes-validate==1.37.0";
const KUBERNETES_VERSION = "1.33.0";

/** Variables whose values are secrets (credentials, signing keys, provider keys, webhook addresses). */
const SECRET_NAME = /(_SECRET|_TOKEN|_API_KEY|PASSWORD|(^|_)DATABASE_URL|_WEBHOOK_URL)$/;

type Obj = Record<string, unknown> & { kind: string; metadata: { name: string; labels: Record<string, string> } };

function compile(dir: string): DomainIR {
  const { ir, findings } = checkDomain(dir);
  if (!ir) throw new Error(findings.map((f) => f.message).join("; "));
  return ir;
}

/** A domain with neither auth nor pages, so nothing below is tuned to the example. */
function plainDomain(): string {
  return writeDomain({
    "entities/part.contract.yaml": entityYaml("part", "    label:\n      type: string\n      required: true\n", "", "warehouse_two"),
  });
}

function objectsOf(files: { path: string; content: string }[]): Obj[] {
  return files
    .filter((f) => f.path.endsWith(".yaml") && !f.path.endsWith("kustomization.yaml"))
    .flatMap((f) => parseAllDocuments(f.content).map((d) => d.toJS() as Obj));
}

function find(objects: Obj[], kind: string, name: string): Obj {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind}/${name} among ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
  return o;
}

// biome-ignore lint/suspicious/noExplicitAny: walking parsed manifests
type Any = any;

function podSpec(o: Obj): Any {
  return (o as Any).spec.template.spec;
}

/** Runs the strict schema validator over every manifest file of `dir`; returns its exit code and output. */
function validate(dir: string, files: string[]): { status: number; output: string } {
  const r = spawnSync(join(VENV_BIN, "kubernetes-validate"), ["--strict", "-k", KUBERNETES_VERSION, ...files], {
    cwd: dir,
    encoding: "utf8",
  });
  return { status: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}

describe("k8s target", () => {
  const example = compile("examples/helpdesk");
  const exampleFiles = generateK8s(example);
  const plain = compile(plainDomain());
  const plainFiles = generateK8s(plain);

  beforeAll(() => {
    ensureVenv([KUBERNETES_VALIDATE]);
  });

  it("matches the golden manifests of the example", () => {
    expectGolden("test/golden/k8s/helpdesk", exampleFiles);
  });

  it("gives the same bytes twice and a header on every file", () => {
    expect(generateK8s(compile("examples/helpdesk"))).toEqual(exampleFiles);
    for (const f of [...exampleFiles, ...plainFiles]) expect(f.content, f.path).toContain(GENERATED_NOTICE);
  });

  it.each([
    ["the example (auth and pages)", exampleFiles],
    ["a domain without auth or pages", plainFiles],
  ])("validates against the Kubernetes schemas: %s", (_name, files) => {
    const dir = mkdtempSync(join(tmpdir(), "charter-k8s-"));
    writeFiles(dir, files);
    const manifests = files.filter((f) => f.path.endsWith(".yaml") && !f.path.endsWith("kustomization.yaml")).map((f) => f.path);
    const r = validate(dir, manifests);
    expect(r.status, r.output).toBe(0);
    // Every object was checked, none skipped as unknown.
    expect(r.output.match(/passed for resource/g)?.length).toBe(objectsOf(files).length);
  });

  it("the validator refuses a manifest with a misspelt field (the check can fail)", () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-k8s-bad-"));
    writeFiles(dir, exampleFiles);
    const app = join(dir, "k8s/app.yaml");
    writeFileSync(app, readFileSync(app, "utf8").replace("  replicas: 2\n", "  replica: 2\n"));
    expect(validate(dir, ["k8s/app.yaml"]).status).not.toBe(0);
  });

  it("lists every manifest and image in the kustomization", () => {
    for (const files of [exampleFiles, plainFiles]) {
      const k = parseYaml(files.find((f) => f.path === "k8s/kustomization.yaml")?.content ?? "") as Any;
      const manifests = files.filter((f) => f.path.endsWith(".yaml") && !f.path.endsWith("kustomization.yaml"));
      expect([...k.resources].sort()).toEqual(manifests.map((f) => f.path.replace("k8s/", "")).sort());
      const used = new Set(
        objectsOf(files).flatMap((o) => {
          const spec = o.kind === "Deployment" || o.kind === "Job" ? podSpec(o) : null;
          return spec ? [...(spec.initContainers ?? []), ...spec.containers].map((c: Any) => c.image as string) : [];
        }),
      );
      expect(k.images.map((i: Any) => i.name).sort()).toEqual([...used].sort());
    }
  });

  it("builds with kustomize when kubectl is installed", (ctx) => {
    const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" });
    if (kubectl.status !== 0) ctx.skip();
    const dir = mkdtempSync(join(tmpdir(), "charter-k8s-kustomize-"));
    writeFiles(dir, exampleFiles);
    const built = execFileSync("kubectl", ["kustomize", join(dir, "k8s")], { encoding: "utf8" });
    expect(parseAllDocuments(built).length).toBe(objectsOf(exampleFiles).length);
  });

  it("runs the app scaled out: replicas, probes on /health, resources, autoscaler, disruption budget", () => {
    const objects = objectsOf(exampleFiles);
    const app = find(objects, "Deployment", "helpdesk-app") as Any;
    expect(app.spec.replicas).toBeGreaterThanOrEqual(2);
    const c = app.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet.path).toBe("/health");
    expect(c.livenessProbe.httpGet.path).toBe("/health");
    expect(c.resources.requests.cpu).toBeTruthy();
    expect(c.resources.limits.memory).toBeTruthy();
    const hpa = find(objects, "HorizontalPodAutoscaler", "helpdesk-app") as Any;
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: "helpdesk-app" });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    const pdb = find(objects, "PodDisruptionBudget", "helpdesk-app") as Any;
    expect(pdb.spec.selector.matchLabels).toEqual(app.spec.selector.matchLabels);
  });

  it("selects the pods of each Service and Deployment by their own labels", () => {
    const objects = objectsOf(exampleFiles);
    for (const dep of objects.filter((o) => o.kind === "Deployment") as Any[]) {
      const podLabels = dep.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(dep.spec.selector.matchLabels)) expect(podLabels[k]).toBe(v);
      const svc = find(objects, "Service", dep.metadata.name) as Any;
      for (const [k, v] of Object.entries(svc.spec.selector)) expect(podLabels[k]).toBe(v);
      const ports = dep.spec.template.spec.containers[0].ports.map((p: Any) => p.name);
      expect(ports).toContain(svc.spec.ports[0].targetPort);
    }
  });

  it("runs every workload as non-root with a read-only root file system", () => {
    for (const o of objectsOf(exampleFiles).filter((x) => x.kind === "Deployment" || x.kind === "Job")) {
      const spec = podSpec(o);
      expect(spec.securityContext.runAsNonRoot, o.metadata.name).toBe(true);
      expect(spec.securityContext.runAsUser).toBeGreaterThan(0);
      expect(spec.automountServiceAccountToken).toBe(false);
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        expect(c.securityContext.allowPrivilegeEscalation, c.name).toBe(false);
        expect(c.securityContext.readOnlyRootFilesystem, c.name).toBe(true);
        expect(c.securityContext.capabilities.drop).toEqual(["ALL"]);
      }
    }
  });

  it("references secrets and never writes a secret value", () => {
    for (const files of [exampleFiles, plainFiles]) {
      const objects = objectsOf(files);
      for (const o of objects.filter((x) => x.kind === "Deployment" || x.kind === "Job")) {
        for (const c of [...(podSpec(o).initContainers ?? []), ...podSpec(o).containers]) {
          for (const e of c.env ?? []) {
            if (SECRET_NAME.test(e.name)) {
              expect(e.value, `${o.metadata.name} ${e.name}`).toBeUndefined();
              expect(e.valueFrom.secretKeyRef.name).toMatch(/-secrets$/);
            }
          }
        }
      }
      expect(objects.some((o) => o.kind === "Secret")).toBe(false);
      const cm = objects.find((o) => o.kind === "ConfigMap") as Any;
      for (const key of Object.keys(cm.data)) expect(key).not.toMatch(SECRET_NAME);
    }
  });

  it("wires the app to the Healer service and gives the Healer a volume and one replica", () => {
    const objects = objectsOf(exampleFiles);
    const cm = find(objects, "ConfigMap", "helpdesk-config") as Any;
    const healerSvc = find(objects, "Service", "helpdesk-healer") as Any;
    expect(cm.data.SVC_HEALER_URL).toBe(`http://${healerSvc.metadata.name}:${healerSvc.spec.ports[0].port}`);
    expect(healerSvc.spec.ports[0].port).toBe(8083);
    const healer = find(objects, "Deployment", "helpdesk-healer") as Any;
    expect(healer.spec.replicas).toBe(1);
    expect(healer.spec.strategy.type).toBe("Recreate");
    const claim = healer.spec.template.spec.volumes.find((v: Any) => v.persistentVolumeClaim).persistentVolumeClaim.claimName;
    expect(find(objects, "PersistentVolumeClaim", claim)).toBeTruthy();
    expect(healer.spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe("/healer/health");
  });

  it("reads HEALER_DATABASE_URL from the Secret when it is there, and keeps SQLite on the volume when not", () => {
    const healer = podSpec(find(objectsOf(exampleFiles), "Deployment", "helpdesk-healer")).containers[0];
    const url = healer.env.find((e: Any) => e.name === "HEALER_DATABASE_URL");
    expect(url.valueFrom.secretKeyRef).toEqual({ name: "helpdesk-secrets", key: "HEALER_DATABASE_URL", optional: true });
    const guide = exampleFiles.find((f) => f.path === "k8s/README.md")?.content ?? "";
    expect(guide).toContain("## The Healer's store: a volume or PostgreSQL");
    expect(guide).toContain("kustomize edit add component healer-postgres");
  });

  it("the healer-postgres component runs Healer replicas on PostgreSQL: kustomize builds it and the result validates", (ctx) => {
    const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" });
    if (kubectl.status !== 0) ctx.skip();
    const dir = mkdtempSync(join(tmpdir(), "charter-k8s-healer-pg-"));
    writeFiles(dir, exampleFiles);
    const k = join(dir, "k8s/kustomization.yaml");
    // What `kustomize edit add component healer-postgres` writes.
    writeFileSync(k, `${readFileSync(k, "utf8")}components:\n  - healer-postgres\n`);
    const built = execFileSync("kubectl", ["kustomize", join(dir, "k8s")], { encoding: "utf8" });
    writeFileSync(join(dir, "built.yaml"), built);
    const r = validate(dir, ["built.yaml"]);
    expect(r.status, r.output).toBe(0);
    const objects = parseAllDocuments(built).map((d) => d.toJS() as Obj);
    expect(objects).toHaveLength(objectsOf(exampleFiles).length);
    const healer = find(objects, "Deployment", "helpdesk-healer") as Any;
    expect(healer.spec.replicas).toBe(2);
    expect(healer.spec.strategy.type).toBe("RollingUpdate");
    const env = healer.spec.template.spec.containers[0].env.filter((e: Any) => e.name === "HEALER_DATABASE_URL");
    expect(env).toEqual([
      {
        name: "HEALER_DATABASE_URL",
        valueFrom: { secretKeyRef: { name: "helpdesk-secrets", key: "HEALER_DATABASE_URL", optional: false } },
      },
    ]);
    expect((find(objects, "PersistentVolumeClaim", "helpdesk-healer-state") as Any).spec.accessModes).toEqual(["ReadWriteMany"]);
    // The rest of the Deployment is the base's: probes, security, the volume.
    expect(healer.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem).toBe(true);
  });

  it("follows the domain: auth switch and secret, frontend only with pages", () => {
    const ex = objectsOf(exampleFiles);
    const pl = objectsOf(plainFiles);
    expect((find(ex, "ConfigMap", "helpdesk-config") as Any).data.AUTH_ENABLED).toBe("true");
    expect((find(pl, "ConfigMap", "warehouse-two-config") as Any).data.AUTH_ENABLED).toBe("false");
    const secretNames = (objs: Obj[], name: string) =>
      podSpec(find(objs, "Deployment", name)).containers[0].env.map((e: Any) => e.name as string);
    expect(secretNames(ex, "helpdesk-app")).toContain("AUTH_SECRET");
    expect(secretNames(pl, "warehouse-two-app")).not.toContain("AUTH_SECRET");
    expect(ex.some((o) => o.metadata.name === "helpdesk-frontend")).toBe(true);
    expect(plainFiles.some((f) => f.path === "k8s/frontend.yaml")).toBe(false);
    expect(pl.every((o) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(o.metadata.name))).toBe(true);
  });

  it("the migration Job's command brings a database up to date, and is idempotent", () => {
    const job = find(objectsOf(exampleFiles), "Job", "helpdesk-migrate") as Any;
    const command: string[] = job.spec.template.spec.containers[0].command;
    expect(command.slice(0, 1)).toEqual(["python"]);
    const out = mkdtempSync(join(tmpdir(), "charter-k8s-migrate-"));
    const backendDir = generateBackend("examples/helpdesk", out);
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
    const db = freshDatabase("charter_k8s_migrate");
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl(db),
      DATABASE_BACKEND: "postgres",
      AUTH_SECRET: TEST_AUTH_SECRET,
      PYTHONDONTWRITEBYTECODE: "1",
    };
    for (let i = 0; i < 2; i++) {
      const r = spawnSync(VENV_PYTHON, command.slice(1), { cwd: backendDir, env, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
    }
    const tables = psql(
      db,
      "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'public';",
      ["-At"],
    );
    for (const t of ["tickets", "customers", "events", "schema_migrations"]) expect(tables.split(",").map((s) => s.trim())).toContain(t);
  });
});
