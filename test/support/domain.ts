import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type CheckResult, checkDomain } from "../../src/compiler/index.js";

/** Writes contract files (relative path -> YAML text) into a fresh temporary domain directory. */
export function writeDomain(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "charter-domain-"));
  for (const [rel, text] of Object.entries(files)) {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
  return dir;
}

export function checkFiles(files: Record<string, string>): CheckResult {
  return checkDomain(writeDomain(files));
}

/** A minimal valid entity contract, with extra YAML appended under `spec.fields`. */
export function entityYaml(name: string, fieldsYaml = "    title:\n      type: string\n", specExtra = "", domain = "shop"): string {
  return `apiVersion: charter/v1
kind: Entity
metadata:
  name: ${name}
  domain: ${domain}
spec:
${specExtra}  fields:
${fieldsYaml}`;
}

/** A Route contract serving the whole CRUD of `entity` at its default base path. */
export function routeYaml(entity: string, domain = "shop"): string {
  return `apiVersion: charter/v1
kind: Route
metadata:
  name: ${entity}_api
  domain: ${domain}
spec:
  entity: entity/${domain}/${entity}
  endpoints:
    - {method: GET, path: /}
    - {method: POST, path: /}
    - {method: GET, path: "/{id}"}
    - {method: PATCH, path: "/{id}"}
    - {method: DELETE, path: "/{id}"}
`;
}

export function messages(r: CheckResult): string[] {
  return r.findings.map((f) => f.message);
}
