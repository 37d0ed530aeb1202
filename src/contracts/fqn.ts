/** The seven contract kinds, as written in `kind:`. */
export const KINDS = ["Entity", "Workflow", "Route", "Page", "Agent", "Mixin", "Infra"] as const;
export type Kind = (typeof KINDS)[number];

export const API_VERSION = "charter/v1";

/** Patterns of SPEC.md "Resources and their fields"; the Healer classifies findings by them. */
export const NAME_PATTERN = "^[a-z][a-z0-9_]*$";
export const FQN_PATTERN = "^(entity|workflow|route|page|agent|mixin|infra)/[a-z][a-z0-9_]*/[a-z][a-z0-9_]*$";
export const GRAPH_EDGE_PATTERN = "^[A-Z][A-Z0-9_]*$";
export const NUMBER_PREFIX_PATTERN = "^[A-Z]{2,6}$";

const fqnRe = new RegExp(FQN_PATTERN);

export interface FqnParts {
  kind: Lowercase<Kind>;
  domain: string;
  name: string;
}

export function formatFqn(kind: Kind | Lowercase<Kind>, domain: string, name: string): string {
  return `${kind.toLowerCase()}/${domain}/${name}`;
}

export function parseFqn(fqn: string): FqnParts | null {
  if (!fqnRe.test(fqn)) return null;
  const [kind, domain, name] = fqn.split("/") as [Lowercase<Kind>, string, string];
  return { kind, domain, name };
}

export function kindOfLower(lower: string): Kind | undefined {
  return KINDS.find((k) => k.toLowerCase() === lower);
}
