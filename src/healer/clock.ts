/** A source of time, injectable so tests can order tickets without sleeping. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/**
 * ISO 8601 with the local UTC offset (`2026-11-22T10:04:05.123+01:00`), as notification
 * timestamps carry it; `toISOString` would give `Z` and hide the offset of the host.
 */
export function isoWithOffset(date: Date): string {
  const pad = (n: number, w = 2): string => String(Math.trunc(Math.abs(n))).padStart(w, "0");
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}` +
    `${sign}${pad(offset / 60)}:${pad(offset % 60)}`
  );
}
