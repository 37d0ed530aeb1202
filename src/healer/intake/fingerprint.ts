import { createHash } from "node:crypto";
import { redactText } from "./redact.js";

/**
 * Reduces a message to what stays the same when one error repeats: ids, timestamps, addresses and
 * counts vary between occurrences of one error storm, so they are replaced by placeholders. The
 * quoted values of validation messages are kept: `'dueDate'` and `'createdAt'` are two problems.
 */
export function normaliseMessage(message: string): string {
  return message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>")
    .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g, "<time>")
    .replace(/\b0x[0-9a-f]+\b/gi, "<hex>")
    .replace(/(?<![\w{,])\d+(?![\w},])/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 1000);
}

/**
 * A runtime message without the values it quotes (row values, literals, numbers given as values):
 * the same failure with another row is the same problem. Validation messages keep their quotes.
 */
export function normaliseRuntimeMessage(message: string): string {
  return normaliseMessage(redactText(message));
}

/**
 * The dedup key of a ticket: contract, error type and normalised message; a runtime
 * report's message is normalised without its values.
 */
export function fingerprintOf(contractFqn: string | null | undefined, errorType: string, message: string, source?: string): string {
  const normalised = source === "runtime" ? normaliseRuntimeMessage(message) : normaliseMessage(message);
  return createHash("sha256")
    .update(`${contractFqn ?? ""}\u0000${errorType}\u0000${normalised}`)
    .digest("hex")
    .slice(0, 32);
}
