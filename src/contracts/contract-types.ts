import type { API_VERSION, Kind } from "./fqn.js";
import type { ContractMetadata, SpecOfKind } from "./spec-types.generated.js";

/**
 * A schema-valid contract's data as a union discriminated by `kind`: `spec` has the type generated
 * from its kind's schema (spec-types.generated.ts), so a reader narrows on `kind` and reads typed
 * fields. Only validatedContract (schema.ts) hands this type out, after the schema passed.
 */
export type ContractDocument<K extends Kind = Kind> = {
  [k in K]: {
    apiVersion: typeof API_VERSION;
    kind: k;
    metadata: ContractMetadata;
    requires?: string[];
    spec: SpecOfKind[k];
  };
}[K];

export type EntityContract = ContractDocument<"Entity">;
export type WorkflowContract = ContractDocument<"Workflow">;
export type RouteContract = ContractDocument<"Route">;
export type PageContract = ContractDocument<"Page">;
export type AgentContract = ContractDocument<"Agent">;
export type MixinContract = ContractDocument<"Mixin">;
export type InfraContract = ContractDocument<"Infra">;
