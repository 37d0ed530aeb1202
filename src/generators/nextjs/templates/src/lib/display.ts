import type { FieldSpec } from "@/lib/schema";

export type Tone = "red" | "orange" | "yellow" | "green" | "blue" | "gray";

/** Badge colours of enum values: the severity words get their usual colours, the rest stay gray. */
const ENUM_TONES: Record<string, Tone> = {
  critical: "red",
  high: "orange",
  medium: "yellow",
  low: "green",
};

export function enumTone(value: unknown): Tone {
  return ENUM_TONES[String(value).toLowerCase()] ?? "gray";
}

/** Kanban header colours by state category. */
export function categoryTone(category: string): Tone {
  switch (category) {
    case "open":
      return "blue";
    case "hold":
      return "yellow";
    case "closed":
      return "green";
    default:
      return "gray";
  }
}

/** `in_progress` -> `In progress`, for enum values shown as text. */
export function humanize(value: unknown): string {
  const text = String(value).replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A date-time as `2026-11-23 08:00 EST`, in `timeZone` (the browser's own when omitted): the same
 * wall-clock time the edit form's datetime-local input shows, with the zone named. A `date` is
 * never converted: it is a calendar day, not an instant.
 */
export function localDateTime(iso: string, timeZone?: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat("en-US", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    }).formatToParts(d);
  } catch {
    // An unknown zone name (a stale cookie): UTC, labelled.
    return timeZone === "UTC" ? iso : localDateTime(iso, "UTC");
  }
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")} ${part("timeZoneName")}`.trim();
}

/** The browser's time zone name (America/New_York); "" on the server, where there is none to tell. */
export function browserTimeZone(): string {
  return typeof window === "undefined" ? "" : Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Plain-text rendering of a value, for cells and detail rows that are not badges. */
export function formatValue(field: FieldSpec, value: unknown, labels?: Readonly<Record<string, string>>, timeZone = "UTC"): string {
  if (value === null || value === undefined || value === "") return "";
  if (field.reference) return labels?.[String(value)] ?? String(value);
  switch (field.type) {
    case "boolean":
      return value ? "Yes" : "No";
    case "datetime":
      return localDateTime(String(value), timeZone);
    case "array":
      return Array.isArray(value) ? value.map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v))).join(", ") : String(value);
    case "object":
      return JSON.stringify(value);
    default:
      return String(value);
  }
}
