/**
 * What the next list update should announce before its summary ("Sorted by Name, ascending. "):
 * set by the control the user used (a sort or paging link, a filter), read by the list's status
 * line once the new page has arrived. Setting it also marks the list busy until then.
 */
let pending = "";
const listeners = new Set<(busy: boolean) => void>();

export function announceNext(text: string): void {
  pending = text;
  for (const listener of listeners) listener(true);
}

export function takeAnnouncement(): string {
  const text = pending;
  pending = "";
  for (const listener of listeners) listener(false);
  return text;
}

/** Follows whether a list update is on its way (for aria-busy). */
export function onBusy(listener: (busy: boolean) => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
