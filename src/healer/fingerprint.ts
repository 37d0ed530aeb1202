import { createHash } from "node:crypto";

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

/** The dedup key of SPEC.md/DESIGN.md: contract, error type and normalised message. */
export function fingerprintOf(contractFqn: string | null | undefined, errorType: string, message: string): string {
  return createHash("sha256")
    .update(`${contractFqn ?? ""}\u0000${errorType}\u0000${normaliseMessage(message)}`)
    .digest("hex")
    .slice(0, 32);
}
