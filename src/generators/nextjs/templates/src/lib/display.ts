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

/** Plain-text rendering of a value, for cells and detail rows that are not badges. */
export function formatValue(field: FieldSpec, value: unknown, labels?: Readonly<Record<string, string>>): string {
  if (value === null || value === undefined || value === "") return "";
  if (field.reference) return labels?.[String(value)] ?? String(value);
  switch (field.type) {
    case "boolean":
      return value ? "Yes" : "No";
    case "datetime": {
      const s = String(value);
      return s.length >= 16 ? s.slice(0, 16).replace("T", " ") : s;
    }
    case "array":
      return Array.isArray(value) ? value.map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v))).join(", ") : String(value);
    case "object":
      return JSON.stringify(value);
    default:
      return String(value);
  }
}
