import { stringify } from "yaml";
import type { DomainIR } from "../../compiler/index.js";
import { compareText } from "../../shared/text.js";
import { hashHeader } from "../header.js";
import type { GeneratedFile, Generator } from "../types.js";
import { renderGuide } from "./guide.js";
import {
  APP_PORT,
  appAutoscaler,
  appDeployment,
  appDisruptionBudget,
  configMap,
  FRONTEND_PORT,
  frontendDeployment,
  HEALER_PORT,
  HEALER_POSTGRES_COMPONENT,
  healerDeployment,
  healerPostgresComponent,
  healerVolumeClaim,
  type K8sNames,
  type K8sObject,
  k8sNames,
  migrateJob,
  service,
} from "./manifests.js";

export { dnsLabel, type K8sNames, type K8sObject, k8sNames } from "./manifests.js";

/** Everything this target writes lives under k8s/ of the output root. */
export const K8S_DIR = "k8s";

/** One manifest file: its objects, in the order `kubectl apply` should meet them. */
interface ManifestFile {
  name: string;
  objects: K8sObject[];
}

function manifestFiles(ir: DomainIR, n: K8sNames): ManifestFile[] {
  const files: ManifestFile[] = [
    { name: "configmap.yaml", objects: [configMap(ir, n)] },
    { name: "migrate-job.yaml", objects: [migrateJob(ir, n)] },
    {
      name: "app.yaml",
      objects: [appDeployment(ir, n), service(n, n.app, "app", APP_PORT), appAutoscaler(n), appDisruptionBudget(n)],
    },
    { name: "healer.yaml", objects: [healerVolumeClaim(n), healerDeployment(n), service(n, n.healer, "healer", HEALER_PORT)] },
  ];
  if (ir.pages.length > 0) {
    files.push({ name: "frontend.yaml", objects: [frontendDeployment(n), service(n, n.frontend, "frontend", FRONTEND_PORT)] });
  }
  return files;
}

/** YAML without line folding or anchors, so the bytes depend on the objects alone. */
function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

function renderManifest(file: ManifestFile): string {
  return hashHeader() + file.objects.map((o) => `---\n${toYaml(o)}`).join("");
}

/**
 * The kustomization ties the files together and names the images in one place, so a deployment
 * sets its registry and tag with `kustomize edit set image` instead of editing generated files.
 */
function renderKustomization(ir: DomainIR, n: K8sNames, files: ManifestFile[]): string {
  const images = [n.appImage, n.healerImage, ...(ir.pages.length > 0 ? [n.frontendImage] : [])];
  return (
    hashHeader() +
    toYaml({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      resources: files.map((f) => f.name),
      images: images.map((name) => ({ name, newName: name, newTag: "latest" })),
    })
  );
}

/** The `k8s` target: manifests to run the generated stack on an existing Kubernetes cluster. */
export function generateK8s(ir: DomainIR): GeneratedFile[] {
  const n = k8sNames(ir);
  const files = manifestFiles(ir, n);
  const out: GeneratedFile[] = files.map((f) => ({ path: `${K8S_DIR}/${f.name}`, content: renderManifest(f) }));
  out.push({ path: `${K8S_DIR}/kustomization.yaml`, content: renderKustomization(ir, n, files) });
  // Not listed in the kustomization: the guide says how to enable it (`kustomize edit add component`).
  out.push({
    path: `${K8S_DIR}/${HEALER_POSTGRES_COMPONENT}/kustomization.yaml`,
    content: hashHeader() + toYaml(healerPostgresComponent(n)),
  });
  out.push({ path: `${K8S_DIR}/README.md`, content: renderGuide(ir, n) });
  return out.sort((a, b) => compareText(a.path, b.path));
}

export const k8sGenerator: Generator = {
  target: "k8s",
  description: "k8s/: Deployments, Services, autoscaler, migration Job, Healer with its volume (or on PostgreSQL), kustomization",
  generate: ({ ir }) => generateK8s(ir),
};
