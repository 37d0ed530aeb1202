import type { Finding } from "../../contracts/index.js";
import type { DiffRecord, Proposal, Ticket } from "../types.js";

/**
 * What a tier 2 or 3 proposer (the LLM proposer, or a test double) receives:
 * the ticket, the affected contract's text, and earlier fixes of that contract as history.
 */
export interface ProposerInput {
  ticket: Ticket;
  contract: {
    fqn: string | null;
    /** Project-relative path of the contract file. */
    file: string;
    source: string;
  };
  /** Current findings of that contract (empty for runtime errors of a valid domain). */
  findings: readonly Finding[];
  /** Earlier diff records of this contract, newest first. */
  history: readonly DiffRecord[];
  /** Contracts this one names (`requires`, references, mixins, state machine), read only. */
  referenced: readonly { fqn: string; file: string; source: string }[];
  /**
   * What would still be wrong with `after` as the new text of the contract: unreadable, schema
   * errors, new errors in the domain, or the ticket's own error still there. Empty: acceptable.
   */
  check(after: string): string[];
}

/**
 * The proposed new text of the contract, or why there is none. The pipeline builds the stored
 * proposal (changes as JSON Patch, snapshots, method by tier) from `after`, so a proposer only has
 * to produce the corrected contract and an explanation.
 */
export type ProposerResult =
  | {
      after: string;
      explanation: string;
      /** Defaults by tier: 0.7 for tier 2, 0.5 for tier 3. */
      confidence?: number;
      method?: Proposal["method"];
      /** Calls it took (1 or 2). */
      attempts?: number;
    }
  | { reason: string; attempts?: number };

export interface Proposer {
  /** Shown in notes and logs (`llm:anthropic/...`, `test`). */
  readonly name: string;
  /**
   * The model and every setting that shapes its answers, as text (hashed, never shown): a failed
   * ticket is asked again when it changes. Default: `name`.
   */
  readonly settings?: string;
  propose(input: ProposerInput): Promise<ProposerResult>;
}

/** The start of the note of a tier 2/3 ticket that failed for want of a provider. */
export const NO_PROVIDER_NOTE = "no LLM provider is configured";
