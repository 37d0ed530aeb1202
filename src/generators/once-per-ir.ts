import type { DomainIR } from "../compiler/index.js";

/**
 * Wraps a pure function of the IR so that it runs once per IR, however many targets ask: `forge
 * generate --target all` runs several generators over one IR, and some need the same derived data
 * (postgres and migrations both build the schema model and, on a first run, the same SQL).
 *
 * Only a frozen IR is remembered. compileDomain deep-freezes what it returns, so such an IR can
 * never change and neither can anything derived from it; an IR built by hand (tests) may be edited
 * between calls, so for it the function simply runs each time. The cache is weak: an IR that is
 * no longer used takes its derived data with it. What the function returns is shared between
 * callers, so they must treat it as read-only.
 */
export function oncePerIr<T>(compute: (ir: DomainIR) => T): (ir: DomainIR) => T {
  const cache = new WeakMap<DomainIR, T>();
  return (ir) => {
    if (!Object.isFrozen(ir)) return compute(ir);
    if (cache.has(ir)) return cache.get(ir) as T;
    const value = compute(ir);
    cache.set(ir, value);
    return value;
  };
}
