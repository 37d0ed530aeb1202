import { stringify } from "yaml";
import type { DomainIR } from "../../compiler/index.js";
import { compareText } from "../../shared/text.js";

/**
 * The Kubernetes objects of one generated domain, as plain data. The app stays stateless (sequences,
 * idempotency and the event outbox live in PostgreSQL), so it scales horizontally; the Healer keeps
 * its SQLite store on a volume and therefore runs as one replica, unless its tickets move to
 * PostgreSQL (`HEALER_DATABASE_URL` in the Secret, and the `healer-postgres` component for replicas).
 */

/** A Kubernetes object: enough structure to keep the builders honest, serialised as-is. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

export const APP_PORT = 8000;
export const HEALER_PORT = 8083;
export const FRONTEND_PORT = 3000;
/** UID/GID of the non-root user the generated backend and Healer images run as (see the docker target). */
export const RUN_AS = 10001;
/** UID/GID of the `nextjs` user of the generated frontend image (src/generators/nextjs Dockerfile). */
export const FRONTEND_RUN_AS = 1001;
/** UID/GID the Healer image runs as (src/generators/docker/templates/healer/Dockerfile). */
export const HEALER_RUN_AS = 1000;
/** Where the Healer image installs Charter, and where its volume keeps the project on Kubernetes. */
const HEALER_CHARTER = "/opt/healer/node_modules/.bin/charter";
const HEALER_STATE_DIR = "/state";
const HEALER_STATE_PROJECT = `${HEALER_STATE_DIR}/project`;

/** Names derived once from the domain: DNS-1123 labels, image names, the Secret and ConfigMap. */
export interface K8sNames {
  base: string;
  app: string;
  healer: string;
  frontend: string;
  migrate: string;
  config: string;
  secret: string;
  healerState: string;
  appImage: string;
  healerImage: string;
  frontendImage: string;
}

export function k8sNames(ir: DomainIR): K8sNames {
  const base = dnsLabel(ir.domain);
  return {
    base,
    app: `${base}-app`,
    healer: `${base}-healer`,
    frontend: `${base}-frontend`,
    migrate: `${base}-migrate`,
    config: `${base}-config`,
    secret: `${base}-secrets`,
    healerState: `${base}-healer-state`,
    appImage: `${base}-app`,
    healerImage: `${base}-healer`,
    frontendImage: `${base}-frontend`,
  };
}

/** snake_case domain name -> a DNS-1123 label (lower case, digits and `-`, at most 40 characters so suffixes fit). */
export function dnsLabel(name: string): string {
  const label = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return label || "app";
}

function labels(n: K8sNames, component: string): Record<string, string> {
  return {
    "app.kubernetes.io/name": n.base,
    "app.kubernetes.io/component": component,
    "app.kubernetes.io/part-of": n.base,
    "app.kubernetes.io/managed-by": "charter",
  };
}

function selector(n: K8sNames, component: string): Record<string, string> {
  return { "app.kubernetes.io/name": n.base, "app.kubernetes.io/component": component };
}

/** The pod-level hardening every workload shares: non-root, no service-account token, seccomp. */
function podSecurity(uid = RUN_AS): Record<string, unknown> {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: uid,
    fsGroup: uid,
    seccompProfile: { type: "RuntimeDefault" },
  };
}

function containerSecurity(): Record<string, unknown> {
  return {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ["ALL"] },
  };
}

/**
 * The annotations a Prometheus with the usual kubernetes-pods scrape job reads: each pod's
 * /metrics on its HTTP port (the app's and the Healer's, app/observability.py and src/healer/prom.ts).
 */
function scrapeAnnotations(port: number): Record<string, string> {
  return { "prometheus.io/scrape": "true", "prometheus.io/port": String(port), "prometheus.io/path": "/metrics" };
}

function httpProbe(path: string, port: string, periodSeconds: number, failureThreshold: number): Record<string, unknown> {
  return { httpGet: { path, port }, periodSeconds, timeoutSeconds: 5, failureThreshold };
}

/** Variables that are secret: referenced from the Secret, never written into a manifest. */
function appSecretEnv(ir: DomainIR, n: K8sNames): Record<string, unknown>[] {
  const ref = (name: string, optional: boolean) => ({
    name,
    valueFrom: { secretKeyRef: { name: n.secret, key: name, ...(optional ? { optional: true } : {}) } },
  });
  const env = [ref("DATABASE_URL", false)];
  if (ir.auth?.provider === "jwt") env.push(ref("AUTH_SECRET", false));
  // The Healer requires its token; the app sends it with every report.
  env.push(ref("SVC_HEALER_TOKEN", false));
  // Optional: with it, /metrics asks scrapers for this bearer token.
  env.push(ref("METRICS_TOKEN", true));
  return env;
}

export function configMap(ir: DomainIR, n: K8sNames): K8sObject {
  const data: Record<string, string> = {
    APP_ENV: "production",
    DATABASE_BACKEND: "postgres",
    PORT: String(APP_PORT),
    CORS_ORIGINS: "*",
    AUTH_ENABLED: ir.auth ? "true" : "false",
    SVC_HEALER_URL: `http://${n.healer}:${HEALER_PORT}`,
    SVC_HEALER_PORT: String(HEALER_PORT),
    IDEMPOTENCY_TTL_SECONDS: "86400",
    LOG_FORMAT: "json",
    METRICS_ENABLED: "true",
  };
  if (ir.auth) {
    data.AUTH_PROVIDER = ir.auth.provider;
    data.AUTH_TOKEN_EXPIRE_MINUTES = "60";
    // Counted in each replica's memory: the guide says the effective limit is N times these.
    data.AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT = "5";
    data.AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS = "20";
    data.AUTH_LOGIN_WINDOW_SECONDS = "900";
  }
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: n.config, labels: labels(n, "config") },
    data: sortedRecord(data),
  };
}

export function appDeployment(ir: DomainIR, n: K8sNames): K8sObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: n.app, labels: labels(n, "app") },
    spec: {
      replicas: 2,
      revisionHistoryLimit: 5,
      selector: { matchLabels: selector(n, "app") },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: labels(n, "app"), annotations: scrapeAnnotations(APP_PORT) },
        spec: {
          automountServiceAccountToken: false,
          securityContext: podSecurity(),
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: "app",
              image: n.appImage,
              imagePullPolicy: "IfNotPresent",
              ports: [{ name: "http", containerPort: APP_PORT, protocol: "TCP" }],
              envFrom: [{ configMapRef: { name: n.config } }],
              env: appSecretEnv(ir, n),
              startupProbe: httpProbe("/health", "http", 2, 30),
              readinessProbe: httpProbe("/health", "http", 5, 3),
              livenessProbe: httpProbe("/health", "http", 10, 3),
              resources: {
                requests: { cpu: "250m", memory: "256Mi" },
                limits: { cpu: "1", memory: "512Mi" },
              },
              securityContext: containerSecurity(),
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            },
          ],
          volumes: [{ name: "tmp", emptyDir: {} }],
        },
      },
    },
  };
}

export function service(n: K8sNames, name: string, component: string, port: number): K8sObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, labels: labels(n, component) },
    spec: {
      type: "ClusterIP",
      selector: selector(n, component),
      ports: [{ name: "http", port, targetPort: "http", protocol: "TCP" }],
    },
  };
}

export function appAutoscaler(n: K8sNames): K8sObject {
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: n.app, labels: labels(n, "app") },
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: n.app },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }],
    },
  };
}

/** Keeps one app pod serving through node drains and cluster upgrades. */
export function appDisruptionBudget(n: K8sNames): K8sObject {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: n.app, labels: labels(n, "app") },
    spec: { minAvailable: 1, selector: { matchLabels: selector(n, "app") } },
  };
}

/**
 * Applies pending migrations and schema.sql once, before a rollout (`python -m app.migrate`, the same
 * code the app runs on start under an advisory lock, so a replica starting meanwhile never races it).
 * The hook annotations let Argo CD and Helm order it; with plain kubectl the guide waits for it.
 */
export function migrateJob(ir: DomainIR, n: K8sNames): K8sObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: n.migrate,
      labels: labels(n, "migrate"),
      annotations: {
        "argocd.argoproj.io/hook": "PreSync",
        "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
        "helm.sh/hook": "pre-install,pre-upgrade",
        "helm.sh/hook-delete-policy": "before-hook-creation",
      },
    },
    spec: {
      backoffLimit: 3,
      activeDeadlineSeconds: 600,
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels: labels(n, "migrate") },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          securityContext: podSecurity(),
          containers: [
            {
              name: "migrate",
              image: n.appImage,
              imagePullPolicy: "IfNotPresent",
              command: ["python", "-m", "app.migrate"],
              envFrom: [{ configMapRef: { name: n.config } }],
              env: appSecretEnv(ir, n),
              resources: {
                requests: { cpu: "100m", memory: "128Mi" },
                limits: { cpu: "500m", memory: "256Mi" },
              },
              securityContext: containerSecurity(),
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            },
          ],
          volumes: [{ name: "tmp", emptyDir: {} }],
        },
      },
    },
  };
}

export function healerVolumeClaim(n: K8sNames): K8sObject {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: n.healerState, labels: labels(n, "healer") },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
  };
}

/**
 * The Healer: one replica (its SQLite queue lives on a ReadWriteOnce volume), replaced with
 * `Recreate` so two pods never open the store at once. The project (contracts and `.forge/`) lives
 * on the volume, so approved fixes survive restarts; the guide copies the contracts in once (the
 * image carries Charter, not the domain).
 */
export function healerDeployment(n: K8sNames): K8sObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: n.healer, labels: labels(n, "healer") },
    spec: {
      replicas: 1,
      revisionHistoryLimit: 5,
      selector: { matchLabels: selector(n, "healer") },
      strategy: { type: "Recreate" },
      template: {
        metadata: { labels: labels(n, "healer"), annotations: scrapeAnnotations(HEALER_PORT) },
        spec: {
          automountServiceAccountToken: false,
          securityContext: podSecurity(HEALER_RUN_AS),
          initContainers: [healerSeedContainer(n)],
          containers: [healerContainer(n)],
          volumes: [
            { name: "state", persistentVolumeClaim: { claimName: n.healerState } },
            { name: "tmp", emptyDir: {} },
          ],
        },
      },
    },
  };
}

/** Makes the project folders on the Healer's volume before it starts. */
function healerSeedContainer(n: K8sNames): Record<string, unknown> {
  return {
    name: "seed-project",
    image: n.healerImage,
    imagePullPolicy: "IfNotPresent",
    // The project folders on the volume; the contracts are copied in once (see the guide) and
    // later starts keep the volume's (possibly healed) contracts.
    command: ["mkdir", "-p", `${HEALER_STATE_PROJECT}/domains`, `${HEALER_STATE_PROJECT}/.forge`],
    resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
    securityContext: containerSecurity(),
    volumeMounts: [{ name: "state", mountPath: HEALER_STATE_DIR }],
  };
}

/** The Healer itself, serving the contracts on its volume. */
function healerContainer(n: K8sNames): Record<string, unknown> {
  return {
    name: "healer",
    image: n.healerImage,
    imagePullPolicy: "IfNotPresent",
    workingDir: HEALER_STATE_PROJECT,
    command: [HEALER_CHARTER, "healer", "serve", "--host", "0.0.0.0", "--port", String(HEALER_PORT), "domains"],
    ports: [{ name: "http", containerPort: HEALER_PORT, protocol: "TCP" }],
    env: healerEnv(n),
    readinessProbe: httpProbe("/healer/health", "http", 5, 3),
    livenessProbe: httpProbe("/healer/health", "http", 10, 3),
    resources: {
      requests: { cpu: "100m", memory: "192Mi" },
      limits: { cpu: "1", memory: "512Mi" },
    },
    securityContext: containerSecurity(),
    volumeMounts: [
      { name: "state", mountPath: HEALER_STATE_DIR },
      { name: "tmp", mountPath: "/tmp" },
    ],
  };
}

/** The Healer's settings: its port, its store, the app's database, its token, webhook and LLM keys. */
function healerEnv(n: K8sNames): Record<string, unknown>[] {
  return [
    { name: "SVC_HEALER_PORT", value: String(HEALER_PORT) },
    // Unset: tickets in SQLite on the volume. Set: one PostgreSQL queue (see healerPostgresComponent).
    healerDatabaseUrl(n, true),
    {
      // The app's database, read only to count the rows a proposal's destructive steps
      // touch (the review page's "drops column ... N rows").
      name: "SVC_HEALER_APP_DATABASE_URL",
      valueFrom: { secretKeyRef: { name: n.secret, key: "DATABASE_URL" } },
    },
    {
      name: "SVC_HEALER_TOKEN",
      // Required: the Healer listens on the pod network, so it never runs without a token.
      valueFrom: { secretKeyRef: { name: n.secret, key: "SVC_HEALER_TOKEN" } },
    },
    {
      name: "SVC_HEALER_WEBHOOK_URL",
      valueFrom: { secretKeyRef: { name: n.secret, key: "SVC_HEALER_WEBHOOK_URL", optional: true } },
    },
    {
      name: "SVC_AI_MODEL",
      valueFrom: { secretKeyRef: { name: n.secret, key: "SVC_AI_MODEL", optional: true } },
    },
    ...["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY"].map((name) => ({
      name,
      valueFrom: { secretKeyRef: { name: n.secret, key: name, optional: true } },
    })),
  ];
}

function healerDatabaseUrl(n: K8sNames, optional: boolean): Record<string, unknown> {
  return { name: "HEALER_DATABASE_URL", valueFrom: { secretKeyRef: { name: n.secret, key: "HEALER_DATABASE_URL", optional } } };
}

/** The kustomize component that runs the Healer on PostgreSQL (`k8s/healer-postgres/`). */
export const HEALER_POSTGRES_COMPONENT = "healer-postgres";
export const HEALER_POSTGRES_REPLICAS = 2;

/**
 * A kustomize Component that turns the Healer into replicas of one PostgreSQL queue: the store
 * URL becomes required, the Deployment runs several pods with a rolling update (claims use
 * `FOR UPDATE SKIP LOCKED` with leases, so replicas never process one ticket twice and a killed
 * pod's work comes back), and the project volume becomes ReadWriteMany so every replica sees the
 * contracts the others fix (the apply lock in PostgreSQL serialises those writes).
 */
export function healerPostgresComponent(n: K8sNames): Record<string, unknown> {
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: n.healer },
    spec: {
      replicas: HEALER_POSTGRES_REPLICAS,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: { spec: { containers: [{ name: "healer", env: [healerDatabaseUrl(n, false)] }] } },
    },
  };
  const claim = {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: n.healerState },
    spec: { accessModes: ["ReadWriteMany"] },
  };
  return {
    apiVersion: "kustomize.config.k8s.io/v1alpha1",
    kind: "Component",
    patches: [
      { target: { kind: "Deployment", name: n.healer }, patch: stringify(deployment, { lineWidth: 0 }) },
      { target: { kind: "PersistentVolumeClaim", name: n.healerState }, patch: stringify(claim, { lineWidth: 0 }) },
    ],
  };
}

export function frontendDeployment(n: K8sNames): K8sObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: n.frontend, labels: labels(n, "frontend") },
    spec: {
      replicas: 2,
      revisionHistoryLimit: 5,
      selector: { matchLabels: selector(n, "frontend") },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: labels(n, "frontend") },
        spec: {
          automountServiceAccountToken: false,
          securityContext: podSecurity(FRONTEND_RUN_AS),
          containers: [
            {
              name: "frontend",
              image: n.frontendImage,
              imagePullPolicy: "IfNotPresent",
              ports: [{ name: "http", containerPort: FRONTEND_PORT, protocol: "TCP" }],
              env: [
                { name: "PORT", value: String(FRONTEND_PORT) },
                { name: "HOSTNAME", value: "0.0.0.0" },
                // The Next.js server renders the pages with the API's data: the app's Service.
                { name: "API_URL", value: `http://${n.app}:8000` },
              ],
              readinessProbe: httpProbe("/", "http", 5, 3),
              livenessProbe: httpProbe("/", "http", 10, 3),
              resources: {
                requests: { cpu: "100m", memory: "128Mi" },
                limits: { cpu: "500m", memory: "256Mi" },
              },
              securityContext: containerSecurity(),
              volumeMounts: [
                { name: "tmp", mountPath: "/tmp" },
                { name: "next-cache", mountPath: "/app/.next/cache" },
              ],
            },
          ],
          volumes: [
            { name: "tmp", emptyDir: {} },
            { name: "next-cache", emptyDir: {} },
          ],
        },
      },
    },
  };
}

function sortedRecord(r: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => compareText(a, b)));
}
