import type { DomainIR } from "../compiler/index.js";

/** One file a generator produces: a POSIX path relative to the output root, and its full text. */
export interface GeneratedFile {
  path: string;
  content: string;
  /** What the user must notice about this file (a destructive migration step, say), as data. */
  warnings?: readonly GenerationWarning[];
  /**
   * Once written, the file is history the generator never produces again (a numbered migration):
   * the writer keeps it, and never takes it for stale output.
   */
  permanent?: boolean;
  /**
   * An extension point that belongs to the user once written (a custom router, hooks, a page): the
   * writer creates it only when absent and never overwrites, removes or reports it, even with
   * `force`. It carries `OWNED_NOTICE` instead of the "Do not edit" header.
   */
  owned?: boolean;
  /**
   * Text copied verbatim from a template that ruff or biome already check where it stands: the
   * format stage (format.ts) leaves it alone.
   */
  preformatted?: boolean;
  /** The target that produced the file; set by the registry, recorded in the writer's manifest. */
  target?: string;
}

/** A finding of a generator about its output; the CLI prints it as `path: WARNING kind: message`. */
export interface GenerationWarning {
  /** `destructive`: data may be lost; `review`: may fail or need a look before it is applied. */
  kind: "destructive" | "review";
  message: string;
  /**
   * The table (and column) the warning is about, when it is about one: `charter plan` locates the
   * warning in the contract that declares them.
   */
  table?: string;
  column?: string;
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
