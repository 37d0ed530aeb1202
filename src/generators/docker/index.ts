import type { DomainIR } from "../../compiler/index.js";
import { generateRequirements } from "../fastapi/app-modules.js";
import { hashHeader } from "../header.js";
import { charterVersion } from "../template-dir.js";
import type { GeneratedFile, Generator, GeneratorInput } from "../types.js";
import { renderCompose } from "./compose.js";
import { renderEnvExample } from "./settings.js";
import { dockerTemplate } from "./templates.js";

export { composeModel, DB_HEALTHCHECK, HEALER_PROJECT_DIR, PORTS } from "./compose.js";
export { type Setting, type SettingGroup, settingGroups } from "./settings.js";

/** The compose file at the output root, beside `.env.example`. */
export const COMPOSE_PATH = "docker-compose.yml";

/**
 * The tarball `npm pack` makes of the generating Charter, which the Healer image installs: the
 * version that generated the stack, from the copy the user has, with no registry in between.
 */
export function healerTarball(): string {
  return `charter-${charterVersion()}.tgz`;
}

/** The Healer sidecar's "requirements file": the Charter package, pinned to the generating version. */
function healerPackageJson(ir: DomainIR): string {
  const pkg = {
    "//": hashHeader().slice(2).trimEnd(),
    name: `${ir.domain.replace(/_/g, "-")}-healer`,
    private: true,
    description: "The Healer sidecar of the generated stack: `charter healer serve` on port 8083.",
    dependencies: { charter: `file:${healerTarball()}` },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/**
 * The `docker` target: the backend image (Dockerfile, .dockerignore, pinned requirements.txt), the
 * Healer sidecar image (Dockerfile, package.json), the compose file and `.env.example`. The
 * frontend's Dockerfile comes with the `nextjs` target.
 */
export function generateDocker({ ir }: GeneratorInput): GeneratedFile[] {
  const header = hashHeader();
  return [
    { path: COMPOSE_PATH, content: renderCompose(ir, header) },
    { path: ".env.example", content: renderEnvExample(ir, header) },
    { path: "backend/Dockerfile", content: header + dockerTemplate("backend/Dockerfile") },
    { path: "backend/.dockerignore", content: header + dockerTemplate("backend/_dockerignore") },
    { path: "backend/requirements.txt", content: generateRequirements() },
    { path: "healer/Dockerfile", content: header + dockerTemplate("healer/Dockerfile") },
    { path: "healer/.dockerignore", content: header + dockerTemplate("healer/_dockerignore") },
    { path: "healer/package.json", content: healerPackageJson(ir) },
  ];
}

export const dockerGenerator: Generator = {
  target: "docker",
  description: "Dockerfiles of the backend and the Healer sidecar, the compose file and .env.example",
  generate: generateDocker,
};
