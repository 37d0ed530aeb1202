import type { DomainIR } from "../compiler/index.js";

/** One file a generator produces: a POSIX path relative to the output root, and its full text. */
export interface GeneratedFile {
  path: string;
  content: string;
}

export interface GeneratorInput {
  ir: DomainIR;
  /**
   * Files already present in the output directory that the generator listed in `reads` (for
   * example the migrations snapshot), path -> content. Generators never touch the disk themselves.
   */
  existing: ReadonlyMap<string, string>;
}

/**
 * A generation target. `generate` is pure: the same input gives the same files, byte for byte,
 * with no timestamps, random ids or absolute paths in them.
 */
export interface Generator {
  target: string;
  description: string;
  /** Output-relative paths (or directory prefixes ending in `/`) to read before generating. */
  reads?: (ir: DomainIR) => string[];
  generate: (input: GeneratorInput) => GeneratedFile[];
}
