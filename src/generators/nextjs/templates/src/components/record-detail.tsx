import { FieldValue } from "@/components/field-value";
import { type ApiRecord, type FieldSpec, readField } from "@/lib/schema";
import { cn } from "@/lib/utils";

/** Every field of a record as a label/value grid; long text spans the full width. */
function RecordDetail({
  record,
  fields,
  labels,
  zone,
}: {
  record: ApiRecord;
  fields: readonly FieldSpec[];
  labels: Readonly<Record<string, Readonly<Record<string, string>>>>;
  zone: string;
}) {
  return (
    <dl className="grid gap-x-8 gap-y-5 sm:grid-cols-2" data-testid="record-detail">
      {fields.map((f) => (
        <div key={f.name} className={cn("space-y-1", (f.type === "text" || f.type === "object") && "sm:col-span-2")}>
          <dt className="text-muted-foreground text-xs font-medium tracking-wide uppercase">{f.label}</dt>
          <dd className="text-sm break-words whitespace-pre-wrap" data-testid={`detail-${f.name}`}>
            <FieldValue field={f} value={readField(record, f.name)} labels={labels[f.name]} zone={zone} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

export { RecordDetail };
