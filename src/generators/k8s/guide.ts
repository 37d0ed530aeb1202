import type { DomainIR } from "../../compiler/index.js";
import { GENERATED_NOTICE } from "../header.js";
import { HEALER_PORT, HEALER_POSTGRES_COMPONENT, HEALER_POSTGRES_REPLICAS, type K8sNames } from "./manifests.js";

/** The short deployment guide written beside the manifests (k8s/README.md), section by section. */
export function renderGuide(ir: DomainIR, n: K8sNames): string {
  const pages = ir.pages.length > 0;
  return [
    ...introSection(ir, n, pages),
    ...deploySection(ir, n, pages),
    ...scalingSection(),
    ...healerStoreSection(n),
    ...exposingSection(n, pages),
    ...observabilitySection(n, pages),
  ].join("\n");
}

/** The title and the table of the files beside the guide. */
function introSection(ir: DomainIR, n: K8sNames, pages: boolean): string[] {
  return [
    `<!-- ${GENERATED_NOTICE} -->`,
    "",
    `# Running ${ir.domain} on Kubernetes`,
    "",
    "These manifests run the generated stack on an existing cluster and an existing PostgreSQL",
    "(a managed database or one you operate): the database itself is not part of them.",
    "",
    "| file | what it holds |",
    "|---|---|",
    `| \`configmap.yaml\` | \`${n.config}\`: the non-secret settings (APP_ENV=production, PORT, CORS, auth switch, Healer address) |`,
    `| \`migrate-job.yaml\` | \`${n.migrate}\`: applies pending migrations and \`schema.sql\` once, before a rollout |`,
    `| \`app.yaml\` | \`${n.app}\`: Deployment (2 replicas, probes on \`/health\`), Service, HorizontalPodAutoscaler (2-10 at 70 % CPU), PodDisruptionBudget |`,
    `| \`healer.yaml\` | \`${n.healer}\`: one replica with its state on a PersistentVolumeClaim, and its Service |`,
    `| \`${HEALER_POSTGRES_COMPONENT}/\` | a kustomize component that runs the Healer as ${HEALER_POSTGRES_REPLICAS} replicas of one PostgreSQL queue (see below) |`,
    ...(pages ? [`| \`frontend.yaml\` | \`${n.frontend}\`: the Next.js admin, Deployment and Service |`] : []),
    "| `kustomization.yaml` | the list of files and the image names to point at your registry |",
    "",
  ];
}

/** Build the images, create the Secret, migrate then roll out, hand the Healer its contracts. */
function deploySection(ir: DomainIR, n: K8sNames, pages: boolean): string[] {
  const jwt = ir.auth?.provider === "jwt";
  const secretArgs = [
    "  --from-literal=DATABASE_URL='postgresql://USER:PASSWORD@HOST:5432/DB'",
    ...(jwt ? ['  --from-literal=AUTH_SECRET="$(openssl rand -hex 32)"'] : []),
    '  --from-literal=SVC_HEALER_TOKEN="$(openssl rand -hex 32)"',
  ];
  return [
    "## Deploy",
    "",
    "1. Build and push the images from the `docker` target's output (`backend/Dockerfile`, the Healer",
    `   Dockerfile${pages ? ", `frontend/Dockerfile`" : ""}), then point the kustomization at them:`,
    "",
    "   ```sh",
    "   cd k8s",
    `   kustomize edit set image ${n.appImage}=REGISTRY/${n.appImage}:TAG ${n.healerImage}=REGISTRY/${n.healerImage}:TAG${
      pages ? ` ${n.frontendImage}=REGISTRY/${n.frontendImage}:TAG` : ""
    }`,
    "   ```",
    "",
    "2. Create the Secret the manifests refer to (no secret value is ever written into them):",
    "",
    "   ```sh",
    `   kubectl create secret generic ${n.secret} \\`,
    `${secretArgs.join(" \\\n")}`,
    "   ```",
    "",
    '   Optional keys the Healer reads from the same Secret: `HEALER_DATABASE_URL` (see "The Healer\'s store"),',
    "   `SVC_HEALER_WEBHOOK_URL`, `SVC_AI_MODEL` and the LLM provider keys (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,",
    "   `GEMINI_API_KEY`, `GROQ_API_KEY`, `OPENROUTER_API_KEY`).",
    "",
    "3. Migrate, wait, then roll out:",
    "",
    "   ```sh",
    `   kubectl delete job ${n.migrate} --ignore-not-found`,
    "   kubectl apply -k . -l 'app.kubernetes.io/component in (config,migrate)'",
    `   kubectl wait --for=condition=complete job/${n.migrate} --timeout=600s`,
    "   kubectl apply -k .",
    "   ```",
    "",
    "   Argo CD and Helm order the Job by its hook annotations (`PreSync`, `pre-install,pre-upgrade`).",
    "   The app runs the same idempotent step on start under an advisory lock, so a pod that starts",
    "   before the Job finished waits for it instead of racing it. Steps that lose data (dropped",
    "   columns and tables, narrowed types) are held back, the app serving without them (its",
    "   `/health` lists them); apply them once you have a backup:",
    `   \`kubectl exec deploy/${n.app} -- python -m app.migrate --allow-destructive\`.`,
    "",
    "4. Give the Healer the contracts it watches and fixes (once; they stay on its volume):",
    "",
    "   ```sh",
    `   kubectl cp domains/. "$(kubectl get pod -l app.kubernetes.io/component=healer -o jsonpath='{.items[0].metadata.name}')":/state/project/domains`,
    "   ```",
    "",
  ];
}

function scalingSection(): string[] {
  return [
    "## Scaling",
    "",
    "- The app keeps no state in its pods: record numbers come from PostgreSQL sequences and the event",
    "  outbox is a table, so any number of replicas share one database. Size the database's connection",
    "  limit for `replicas x DATABASE_POOL_SIZE` (10 by default) plus the Job, and, when an LLM provider",
    "  runs the agents, `replicas x DISPATCH_POOL_SIZE` (5) for each pod's events worker process. The",
    "  replicas share the events outbox (claims with `FOR UPDATE SKIP LOCKED`, leased): a pod that dies",
    "  leaves its claimed events to the others once `DISPATCH_LEASE_SECONDS` (120) has passed.",
    "- Limits kept in memory are per process: the login throttle (`AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT`,",
    "  `..._PER_ADDRESS`, in the ConfigMap) counts failures in each replica's memory, so with N replicas a",
    "  client can reach N times the configured figure; set the figures with that in mind. Idempotency keys",
    "  are kept in PostgreSQL (`IDEMPOTENCY_TTL_SECONDS`), so a retry reaching another replica is answered alike.",
    "- The Healer runs as one replica by default (next section). Approved fixes change the contracts on",
    "  its volume, so take them back into your repository (`.forge/diffs/` holds every fix) and rebuild",
    "  the images to deploy the regenerated code.",
    "- Every workload runs as a non-root user with a read-only root file system, no privilege",
    "  escalation, all capabilities dropped and the runtime's default seccomp profile.",
    "",
  ];
}

function healerStoreSection(n: K8sNames): string[] {
  return [
    "## The Healer's store: a volume or PostgreSQL",
    "",
    `By default the Healer keeps its tickets in SQLite on the \`${n.healerState}\` claim (ReadWriteOnce), so it`,
    "runs as one replica and is replaced with `Recreate`. To keep them in PostgreSQL instead, put a",
    "`HEALER_DATABASE_URL` key (a `postgres://` URL) in the Secret; it may be the app's own database, since",
    "the Healer keeps its tables in a schema of its own (`healer`, created or migrated on start under an",
    "advisory lock). With the key alone the Healer still runs one pod, and its queue is backed up with",
    "the database.",
    "",
    `To run several Healer replicas on that one queue, enable the \`${HEALER_POSTGRES_COMPONENT}\` component:`,
    "",
    "   ```sh",
    "   cd k8s",
    `   kustomize edit add component ${HEALER_POSTGRES_COMPONENT}`,
    "   ```",
    "",
    `It makes \`HEALER_DATABASE_URL\` required, runs ${HEALER_POSTGRES_REPLICAS} replicas with a rolling update, and turns the`,
    "claim into ReadWriteMany so every replica sees the contracts the others fix: it needs a storage class",
    "that offers ReadWriteMany (NFS, CephFS, EFS, Azure Files, Filestore). Replicas claim tickets with",
    "`FOR UPDATE SKIP LOCKED`, so no ticket is processed twice at once; a claim is a lease of 60 seconds",
    "that a live replica keeps renewing, so the work of a replica that is killed goes back to the queue.",
    "Fixes are applied under one lock held in the database, one replica at a time.",
    "",
  ];
}

function exposingSection(n: K8sNames, pages: boolean): string[] {
  return [
    "## Exposing it",
    "",
    `The Services are \`ClusterIP\`. Expose \`${n.app}\` (port 8000)${pages ? ` and \`${n.frontend}\` (port 3000)` : ""} through your ingress`,
    "controller or gateway.",
    ...(pages
      ? [
          `The frontend's server calls the API inside the cluster (\`API_URL=http://${n.app}:8000\` in`,
          "frontend.yaml); the browser talks only to the frontend, so the API needs no CORS entry for it.",
        ]
      : []),
    "",
  ];
}

/** Logs, metrics, traces, and whom the login throttle believes about the client's address. */
function observabilitySection(n: K8sNames, pages: boolean): string[] {
  return [
    "## Logs, metrics and traces",
    "",
    "- The app writes one JSON object per log line (`LOG_FORMAT`), each with the request's id (its",
    "  `X-Request-ID` header, also in every error body) and trace id.",
    `- Both the app (port 8000) and the Healer (${HEALER_PORT}) serve \`/metrics\` in Prometheus' format; their pods`,
    "  carry the `prometheus.io/scrape`, `port` and `path` annotations. With the Prometheus Operator, add a",
    "  PodMonitor selecting `app.kubernetes.io/component` `app` and `healer` on port `http`. A",
    "  `METRICS_TOKEN` key in the Secret makes the app's `/metrics` ask for that bearer token.",
    "- Traces are off until `OTEL_EXPORTER_OTLP_ENDPOINT` (an OTLP/HTTP collector, e.g.",
    "  `http://otel-collector:4318`) is set in the ConfigMap; the other `OTEL_*` variables (sampler,",
    "  headers, service name) work as the OpenTelemetry SDK documents them. `SVC_HEALER_TRACE_URL` (a",
    "  template such as `https://tempo.example/trace/{trace_id}`) links each Healer ticket to its trace.",
    "",
    "The login throttle counts failures per client address. The API believes `X-Forwarded-For` only",
    `from \`TRUSTED_PROXIES\` (addresses or networks, comma-separated; none by default): set it in`,
    `\`${n.config}\` to the network of your ${pages ? "frontend pods and " : ""}ingress, never to a range other callers share.`,
    "",
  ];
}
