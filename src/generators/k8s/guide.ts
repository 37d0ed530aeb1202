import type { DomainIR } from "../../compiler/index.js";
import { GENERATED_NOTICE } from "../header.js";
import type { K8sNames } from "./manifests.js";

/** The short deployment guide written beside the manifests (k8s/README.md). */
export function renderGuide(ir: DomainIR, n: K8sNames): string {
  const pages = ir.pages.length > 0;
  const jwt = ir.auth?.provider === "jwt";
  const secretArgs = [
    "  --from-literal=DATABASE_URL='postgresql://USER:PASSWORD@HOST:5432/DB'",
    ...(jwt ? ['  --from-literal=AUTH_SECRET="$(openssl rand -hex 32)"'] : []),
    '  --from-literal=SVC_HEALER_TOKEN="$(openssl rand -hex 32)"',
  ];
  const lines = [
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
    ...(pages ? [`| \`frontend.yaml\` | \`${n.frontend}\`: the Next.js admin, Deployment and Service |`] : []),
    "| `kustomization.yaml` | the list of files and the image names to point at your registry |",
    "",
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
    "   Optional keys the Healer reads from the same Secret: `SVC_HEALER_WEBHOOK_URL`, `SVC_AI_MODEL` and the",
    "   LLM provider keys (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `GROQ_API_KEY`, `OPENROUTER_API_KEY`).",
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
    "   before the Job finished waits for it instead of racing it.",
    "",
    "## Scaling",
    "",
    "- The app keeps no state in its pods: record numbers come from PostgreSQL sequences and the event",
    "  outbox is a table, so any number of replicas share one database. Size the database's connection",
    "  limit for `replicas x DATABASE_POOL_SIZE` (10 by default) plus the Job.",
    "- Limits kept in memory (such as request rate limits) are per replica: with N replicas a client can",
    "  reach N times the configured figure.",
    "- The Healer's SQLite store lives on a ReadWriteOnce volume, so it runs as one replica and is",
    "  replaced with `Recreate`. Its contracts are copied onto the volume on first start; approved fixes",
    "  change them there, so take them back into your repository (`.forge/diffs/` holds every fix) and",
    "  rebuild the images to deploy the regenerated code.",
    "- Every workload runs as a non-root user with a read-only root file system, no privilege",
    "  escalation, all capabilities dropped and the runtime's default seccomp profile.",
    "",
    "## Exposing it",
    "",
    `The Services are \`ClusterIP\`. Expose \`${n.app}\` (port 8000)${pages ? ` and \`${n.frontend}\` (port 3000)` : ""} through your ingress`,
    "controller or gateway.",
    ...(pages
      ? [
          "The browser calls the API directly: build the frontend image with `--build-arg",
          "NEXT_PUBLIC_API_URL=https://<the API's public address>` (Next.js fixes it at build time) and list",
          "the frontend's address in `CORS_ORIGINS` (configmap.yaml or a kustomize patch).",
        ]
      : []),
    "",
  ];
  return lines.join("\n");
}
