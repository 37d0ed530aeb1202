/**
 * What the next list update should announce before its summary ("Sorted by Name, ascending. "):
 * set by the control the user used (a sort or paging link, a filter), read by the list's status
 * line once the new page has arrived.
 */
let pending = "";

export function announceNext(text: string): void {
  pending = text;
}

export function takeAnnouncement(): string {
  const text = pending;
  pending = "";
  return text;
}
