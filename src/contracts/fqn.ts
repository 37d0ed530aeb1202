/** The seven contract kinds, as written in `kind:`. */
export const KINDS = ["Entity", "Workflow", "Route", "Page", "Agent", "Mixin", "Infra"] as const;
export type Kind = (typeof KINDS)[number];

export const API_VERSION = "charter/v1";

/** Patterns of contract names and FQNs (docs/contracts.md); the Healer classifies findings by them. */
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

/** The FQN a contract's envelope declares, or null when its kind, name or domain is unusable. */
export function envelopeFqn(data: Readonly<Record<string, unknown>>): string | null {
  const kind = data.kind;
  const meta = data.metadata as Record<string, unknown> | null | undefined;
  if (typeof kind !== "string" || !(KINDS as readonly string[]).includes(kind)) return null;
  if (typeof meta?.name !== "string" || typeof meta.domain !== "string") return null;
  return formatFqn(kind as Kind, meta.domain, meta.name);
}
