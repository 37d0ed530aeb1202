"use client";

import { useEffect, useState } from "react";

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/**
 * A date-time in the browser's zone, as `2026-11-23 08:00 EST`. The server renders it in the zone
 * the browser reported in the `charter_tz` cookie (UTC before the first visit), so the text is
 * right at first paint; after hydration the browser's own zone is applied, so the value always
 * matches the edit form's datetime-local input.
 *
 * It formats by itself rather than with lib/display's localDateTime (the same text, rendered on
 * the server): importing that module into this island would add it to the JavaScript of every
 * page that shows a value.
 */
export function LocalTime({ iso, text }: { iso: string; text: string }) {
  const [shown, setShown] = useState(text);
  useEffect(() => {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return;
    const zone = new Intl.DateTimeFormat("en-US", { timeZoneName: "short" }).formatToParts(d).find((p) => p.type === "timeZoneName");
    setShown(
      `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}${zone ? ` ${zone.value}` : ""}`,
    );
  }, [iso]);
  return <time dateTime={iso}>{shown}</time>;
}
