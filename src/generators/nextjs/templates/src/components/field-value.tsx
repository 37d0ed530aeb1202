import { Badge } from "@/components/ui/badge";
import { enumTone, formatValue, humanize } from "@/lib/display";
import type { FieldSpec } from "@/lib/schema";

/**
 * One value as a table cell, card line or detail row shows it: enums as coloured badges,
 * references by the display field of their target (an ellipsis until those labels arrive).
 */
function FieldValue({ field, value, labels }: { field: FieldSpec; value: unknown; labels?: Readonly<Record<string, string>> }) {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) {
    return <span className="text-muted-foreground">—</span>;
  }
  if (field.reference && labels === undefined) return <span className="text-muted-foreground">…</span>;
  if (field.enumValues) {
    return (
      <Badge variant={enumTone(value)} data-value={String(value)}>
        {humanize(value)}
      </Badge>
    );
  }
  return <>{formatValue(field, value, labels)}</>;
}

export { FieldValue };
