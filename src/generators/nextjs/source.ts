import { blockHeader, GENERATED_NOTICE, hashHeader, slashHeader } from "../header.js";

/** A TypeScript string literal (JSON quoting is valid TS and stable). */
export function str(value: string): string {
  return JSON.stringify(value);
}

/** A literal for any JSON value: enum members and defaults. */
export function literal(value: unknown): string {
  return JSON.stringify(value ?? null);
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** An object key: bare when it is an identifier, quoted otherwise. */
export function key(name: string): string {
  return IDENT.test(name) ? name : str(name);
}

/** Property access that survives field names which are not identifiers. */
export function prop(object: string, name: string): string {
  return IDENT.test(name) ? `${object}.${name}` : `${object}[${str(name)}]`;
}

/** Indents every non-empty line by `n` spaces. */
export function indent(text: string, n: number): string {
  const pad = " ".repeat(n);
  return text
    .split("\n")
    .map((l) => (l === "" ? l : pad + l))
    .join("\n");
}

/**
 * Prefixes the `@generated` notice in the comment syntax of the file type. JSON has no comments:
 * package.json gets a top-level "//" key instead (see package-json.ts); tsconfig.json is JSONC.
 */
export function withHeader(path: string, content: string): string {
  const base = path.split("/").pop() ?? path;
  if (/\.(tsx?|mjs|js|jsonc)$/.test(base) || base === "tsconfig.json") return slashHeader() + content;
  if (base.endsWith(".css")) return blockHeader() + content;
  if (base.endsWith(".svg")) return `<!-- ${GENERATED_NOTICE} -->\n${content}`;
  if (base === "Dockerfile" || base.startsWith(".")) return hashHeader() + content;
  if (base.endsWith(".json")) return content;
  throw new Error(`no @generated header style for ${path}`);
}

export { GENERATED_NOTICE };
