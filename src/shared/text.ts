/**
 * Text helpers every stage shares (contracts, compiler, generators, importers, Healer). This module
 * imports nothing, so any layer may use it without breaking the one-way dependency direction.
 */

/** Byte-wise string order, independent of the locale, for deterministic output. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
