import type { ReactNode } from "react";

import type { FormIsland } from "@/components/form-island";
import { TriangleAlert } from "@/components/icons";
import { Link } from "@/components/link";
import { buttonVariants } from "@/components/ui/button";
import { Checkbox } from "@/components/ui/checkbox";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Select } from "@/components/ui/select";
import { Textarea } from "@/components/ui/textarea";
import { humanize } from "@/lib/display";
import { FIELD_WIDGETS } from "@/lib/field-types";
import type { FormResult } from "@/lib/forms";
import { toInput } from "@/lib/forms";
import type { ReferenceOption } from "@/lib/references";
import { type ApiRecord, type FieldSpec, readField } from "@/lib/schema";
import { cn } from "@/lib/utils";

/**
 * The create and edit form, rendered on the server: inputs follow the field types, reference
 * fields pick from all records of the target entity, each input starts with the record's value (or
 * the contract's default). FormIsland sends it through `action` (a Server Action that builds the
 * API's body and maps the API's 422 back to the fields) and shows the answer.
 */
export function RecordForm<T extends ApiRecord>({
  fields,
  options,
  record,
  zone,
  island: Island,
  action,
  after,
  cancelHref,
  submitLabel,
  testId,
}: {
  fields: readonly FieldSpec[];
  /** Choices of the reference fields (loaded on the server): reference key -> options. */
  options: Readonly<Record<string, readonly ReferenceOption[]>>;
  /** The record being edited; absent on the create form. */
  record?: T;
  /** The zone date-times are shown in until the browser applies its own. */
  zone: string;
  /**
   * The island that sends the form: FormIsland on the create page, LazyFormIsland on the detail
   * page (loaded when Edit is pressed). The page imports it, so only its code is in the page.
   */
  island: typeof FormIsland;
  action: (values: Record<string, string | boolean>) => Promise<FormResult>;
  /** Where a created record sends the user (create form only). */
  after?: string;
  cancelHref?: string;
  submitLabel: string;
  testId: string;
}) {
  return (
    <Island action={action} after={after} testId={testId} alertIcon={<TriangleAlert className="mt-0.5 size-4 shrink-0" />}>
      <div className="grid gap-x-6 gap-y-5 md:grid-cols-2">
        {fields.map((f) => {
          const id = `field-${f.name}`;
          const initial = toInput(f, record ? readField(record, f.name) : f.defaultValue, zone);
          const wide = f.type === "text" || f.type === "object";
          const common = {
            id,
            name: f.name,
            "data-testid": id,
            "data-type": f.type,
            "aria-required": f.required || undefined,
          } as const;
          const widget = FIELD_WIDGETS[f.type];
          let control: ReactNode;
          if (widget.element === "checkbox" && !f.enumValues) {
            control = (
              <div className="flex h-9 items-center gap-2">
                <Checkbox {...common} defaultChecked={initial === true} />
                {f.description ? <span className="text-muted-foreground text-sm">{f.description}</span> : null}
              </div>
            );
          } else if (f.reference || f.enumValues) {
            const choices = f.reference
              ? (options[f.reference] ?? [])
              : (f.enumValues ?? []).map((v) => ({ value: String(v), label: humanize(v) }));
            control = (
              <Select {...common} defaultValue={String(initial)}>
                <option value="">{f.required ? "Select…" : "None"}</option>
                {choices.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </Select>
            );
          } else if (widget.element === "textarea") {
            control = (
              <Textarea
                {...common}
                rows={f.type === "object" ? 4 : 3}
                className={f.type === "object" ? "font-mono" : undefined}
                placeholder={widget.placeholder}
                defaultValue={String(initial)}
              />
            );
          } else {
            control = (
              <Input
                {...common}
                type={widget.inputType}
                step={f.type === "integer" ? 1 : f.type === "number" ? "any" : undefined}
                pattern={widget.pattern}
                placeholder={widget.placeholder}
                defaultValue={String(initial)}
                data-iso={f.type === "datetime" && record ? String(readField(record, f.name) ?? "") : undefined}
              />
            );
          }
          return (
            <div key={f.name} data-field={f.name} className={cn("space-y-2", wide && "md:col-span-2")}>
              <Label htmlFor={id}>
                {f.label}
                {f.type === "datetime" ? (
                  <span className="text-muted-foreground font-normal" data-zone="">
                    ({zone})
                  </span>
                ) : null}
                {f.required ? (
                  <span className="text-destructive" title="Required" data-required="true">
                    *
                  </span>
                ) : null}
              </Label>
              {control}
              {f.description && f.type !== "boolean" ? (
                <p className="text-muted-foreground text-xs" data-hint="">
                  {f.description}
                </p>
              ) : null}
            </div>
          );
        })}
      </div>
      <div className="flex items-center justify-end gap-2 border-t pt-6">
        {cancelHref ? (
          <Link href={cancelHref} className={buttonVariants({ variant: "outline" })}>
            Cancel
          </Link>
        ) : (
          <button type="button" data-cancel="" className={buttonVariants({ variant: "outline" })}>
            Cancel
          </button>
        )}
        <button type="submit" data-testid="form-submit" className={buttonVariants()}>
          {submitLabel}
        </button>
      </div>
    </Island>
  );
}
