import { LocalTime } from "@/components/local-time";
import { Badge } from "@/components/ui/badge";
import { enumTone, formatValue, humanize } from "@/lib/display";
import type { FieldSpec } from "@/lib/schema";

/**
 * One value as a table cell, card line or detail row shows it: enums as coloured badges,
 * references by the display field of their target, date-times in the browser's zone (`zone` is
 * the zone the server renders them in before the browser applies its own).
 */
function FieldValue({
  field,
  value,
  labels,
  zone = "UTC",
}: {
  field: FieldSpec;
  value: unknown;
  labels?: Readonly<Record<string, string>>;
  zone?: string;
}) {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) {
    return <span className="text-muted-foreground">—</span>;
  }
  if (field.enumValues) {
    return (
      <Badge variant={enumTone(value)} data-value={String(value)}>
        {humanize(value)}
      </Badge>
    );
  }
  if (field.type === "datetime") return <LocalTime iso={String(value)} text={formatValue(field, value, labels, zone)} />;
  return <>{formatValue(field, value, labels, zone)}</>;
}

export { FieldValue };
