import { fileURLToPath } from "node:url";
import type { ErrorObject } from "ajv";
import type { ContractDocument } from "./contract-types.js";
import type { Finding } from "./findings.js";
import { fromPointer } from "./findings.js";
import { API_VERSION } from "./fqn.js";
import type { LoadedContract } from "./loader.js";
import { locate } from "./locate.js";
import { pyRepr } from "./py-repr.js";
import { validateContract } from "./schema-validator.generated.js";

/** The JSON Schemas ship beside `src/` and `dist/` in the package's `schemas/` folder. */
export const SCHEMA_DIR = fileURLToPath(new URL("../../schemas/", import.meta.url));
export const SCHEMA_FILES = [
  "common.schema.json",
  "entity.schema.json",
  "workflow.schema.json",
  "route.schema.json",
  "page.schema.json",
  "agent.schema.json",
  "mixin.schema.json",
  "infra.schema.json",
  "contract.schema.json",
] as const;

/**
 * The schemas are compiled ahead of time into schema-validator.generated.ts (scripts/build-validator.mjs)
 * so that no run pays Ajv's compilation; a test keeps that module in step with schemas/.
 */
type CompiledValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
const contractValidator = validateContract as CompiledValidator;

/** A loaded contract that passed its schema: its data typed by kind (ContractDocument). */
export interface ValidatedContract extends Omit<LoadedContract, "data"> {
  readonly data: ContractDocument;
}

/**
 * Contracts seen to pass the schema. Every caller validates before it compiles, and the compile
 * asks again for each contract: remembering the answer keeps that second question free. Entries
 * are never mutated after the parse (ParseCache), so a pass stays true.
 */
const passed = new WeakSet<LoadedContract>();

/** Checks one contract against the envelope and its kind's schema; returns located findings. */
export function validateContractSchema(contract: LoadedContract): Finding[] {
  if (passes(contract)) return [];
  return toFindings(contractValidator.errors ?? [], contract);
}

/**
 * The contract with its data typed by kind when it passes the schema, else null. This is where
 * plain YAML data becomes typed: the one cast is sound because the compiled schema just accepted
 * the data, and the types are generated from those schemas (spec-types.generated.ts).
 */
export function validatedContract(contract: LoadedContract): ValidatedContract | null {
  return passes(contract) ? (contract as unknown as ValidatedContract) : null;
}

function passes(contract: LoadedContract): boolean {
  if (passed.has(contract)) return true;
  if (!contractValidator(contract.data)) return false;
  passed.add(contract);
  return true;
}

function toFindings(errors: ErrorObject[], contract: LoadedContract): Finding[] {
  // Errors of the branches under an anyOf are noise once the anyOf itself is reported, the way
  // Python's jsonschema reports "is not valid under any of the given schemas" alone.
  const anyOfPaths = errors.filter((e) => e.keyword === "anyOf").map((e) => ({ schema: e.schemaPath, data: e.instancePath }));
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword === "if" || e.keyword === "propertyNames") continue;
    if (e.keyword !== "anyOf" && anyOfPaths.some((a) => e.schemaPath.startsWith(`${a.schema}/`) && e.instancePath.startsWith(a.data)))
      continue;
    const mapped = describe(e, contract.data);
    if (!mapped) continue;
    const segments = fromPointer(mapped.path);
    const pos = locate(contract.doc, contract.lineCounter, segments, { key: mapped.atKey });
    const key = `${mapped.path}\u0000${mapped.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push({
      code: `schema.${e.keyword}`,
      message: mapped.message,
      file: contract.file,
      line: pos.line,
      column: pos.column,
      path: mapped.path,
      schemaPath: e.schemaPath.replace(/^#/, ""),
      severity: "error",
    });
  }
  return findings;
}

interface Described {
  message: string;
  path: string;
  atKey: boolean;
}

/** Phrases an Ajv error in Python jsonschema's classic wording (the Healer matches on it). */
function describe(e: ErrorObject, root: unknown): Described | null {
  const path = e.instancePath;
  const value = valueAt(root, path);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return { message: `${pyRepr(p.missingProperty)} is a required property`, path, atKey: false };
    case "additionalProperties": {
      const extra = String(p.additionalProperty);
      return {
        message: `Additional properties are not allowed (${pyRepr(extra)} was unexpected)`,
        path: `${path}/${escapeSegment(extra)}`,
        atKey: true,
      };
    }
    case "pattern": {
      if (typeof p.propertyName === "string" || e.propertyName !== undefined) {
        const name = String(e.propertyName ?? p.propertyName);
        return { message: `${pyRepr(name)} does not match ${pyRepr(p.pattern)}`, path: `${path}/${escapeSegment(name)}`, atKey: true };
      }
      return { message: `${pyRepr(value)} does not match ${pyRepr(p.pattern)}`, path, atKey: false };
    }
    case "enum":
      return { message: `${pyRepr(value)} is not one of ${pyRepr(p.allowedValues)}`, path, atKey: false };
    case "const":
      if (path === "/apiVersion") {
        return {
          message: `unsupported apiVersion ${pyRepr(value)}: expected ${pyRepr(API_VERSION)}`,
          path,
          atKey: false,
        };
      }
      return { message: `${pyRepr(p.allowedValue)} was expected`, path, atKey: false };
    case "type": {
      const t = Array.isArray(p.type) ? p.type : String(p.type).split(",");
      const types = t.map((x) => pyRepr(String(x))).join(", ");
      return { message: `${pyRepr(value)} is not of type ${types}`, path, atKey: false };
    }
    case "anyOf":
    case "oneOf":
      return { message: `${pyRepr(value)} is not valid under any of the given schemas`, path, atKey: false };
    case "minimum":
      return { message: `${pyRepr(value)} is less than the minimum of ${pyRepr(p.limit)}`, path, atKey: false };
    case "maximum":
      return { message: `${pyRepr(value)} is greater than the maximum of ${pyRepr(p.limit)}`, path, atKey: false };
    case "minItems":
      return { message: `${pyRepr(value)} should be non-empty`, path, atKey: false };
    case "minProperties":
      return { message: `${pyRepr(value)} should be non-empty`, path, atKey: false };
    case "minLength":
      return { message: `${pyRepr(value)} is too short`, path, atKey: false };
    default:
      return { message: `${pyRepr(value)} ${e.message ?? "is invalid"}`, path, atKey: false };
  }
}

function escapeSegment(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

function valueAt(root: unknown, pointer: string): unknown {
  let v: unknown = root;
  for (const seg of fromPointer(pointer)) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[seg];
  }
  return v;
}
