"use client";

import { type FormEvent, type ReactNode, useEffect, useRef, useState } from "react";
import { LoaderCircle } from "@/components/icons";
import { Link } from "@/components/link";

import { ErrorNotice } from "@/components/page-state";
import { Button, buttonVariants } from "@/components/ui/button";
import { Checkbox } from "@/components/ui/checkbox";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Select } from "@/components/ui/select";
import { Textarea } from "@/components/ui/textarea";
import { type ReferenceSource, useReferences } from "@/hooks/use-references";
import { toApiError } from "@/lib/api";
import { browserTimeZone, humanize } from "@/lib/display";
import { type ApiRecord, type FieldSpec, type RuleSpec, readField } from "@/lib/schema";
import { cn } from "@/lib/utils";

type InputValue = string | boolean;

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** API value -> what the input holds. */
function toInput(field: FieldSpec, value: unknown): InputValue {
  if (field.type === "boolean" && !field.enumValues) return value === true;
  if (value === null || value === undefined) return "";
  switch (field.type) {
    case "datetime": {
      const d = new Date(String(value));
      if (Number.isNaN(d.getTime())) return String(value);
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
    }
    case "date":
      return String(value).slice(0, 10);
    case "array":
      return Array.isArray(value) ? value.map(String).join(", ") : String(value);
    case "object":
      return JSON.stringify(value, null, 2);
    default:
      return String(value);
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

/** What the input holds -> API value; "" means "no value". */
function fromInput(field: FieldSpec, raw: InputValue): Parsed {
  if (typeof raw === "boolean") return { ok: true, value: raw };
  if (raw.trim() === "") return { ok: true, value: null };
  if (field.enumValues) {
    const match = field.enumValues.find((v) => String(v) === raw);
    return { ok: true, value: match ?? raw };
  }
  switch (field.type) {
    case "integer":
    case "number": {
      const n = Number(raw);
      // A malformed number goes to the server as typed, so its validation message is shown.
      return { ok: true, value: Number.isFinite(n) ? n : raw };
    }
    case "datetime": {
      const d = new Date(raw);
      return { ok: true, value: Number.isNaN(d.getTime()) ? raw : d.toISOString() };
    }
    case "array": {
      const items = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      const numeric = field.itemsType === "integer" || field.itemsType === "number";
      return { ok: true, value: numeric ? items.map((s) => (Number.isFinite(Number(s)) ? Number(s) : s)) : items };
    }
    case "object":
      try {
        return { ok: true, value: JSON.parse(raw) };
      } catch {
        return { ok: false, error: "Enter valid JSON" };
      }
    default:
      return { ok: true, value: raw };
  }
}

function inputType(field: FieldSpec): string {
  switch (field.type) {
    case "integer":
    case "number":
      return "number";
    case "email":
      return "email";
    case "date":
      return "date";
    case "datetime":
      return "datetime-local";
    default:
      return "text";
  }
}

function initialValues(fields: readonly FieldSpec[], record: ApiRecord | undefined): Record<string, InputValue> {
  const out: Record<string, InputValue> = {};
  for (const f of fields) out[f.name] = toInput(f, record ? readField(record, f.name) : f.defaultValue);
  return out;
}

/**
 * The create and edit form. Inputs follow the field types; reference fields pick from all records
 * of the target entity. The server is the judge of validity: its 422 messages are shown at the
 * fields they name, anything else above the buttons.
 */
function RecordForm<T extends ApiRecord>({
  fields,
  references,
  rules,
  record,
  onSubmit,
  onSaved,
  cancelHref,
  onCancel,
  submitLabel,
  testId,
}: {
  fields: readonly FieldSpec[];
  references: Readonly<Record<string, ReferenceSource>>;
  /** The endpoint's validation rules by their source text: the fields each names and its message. */
  rules: Readonly<Record<string, RuleSpec>>;
  /** The record being edited; absent on the create form. */
  record?: T;
  onSubmit: (data: Record<string, unknown>) => Promise<T>;
  onSaved: (saved: T) => void;
  cancelHref?: string;
  onCancel?: () => void;
  submitLabel: string;
  testId: string;
}) {
  const refs = useReferences(references);
  const [values, setValues] = useState<Record<string, InputValue>>(() => initialValues(fields, record));
  const [initial] = useState(values);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [zone, setZone] = useState("");
  // The zone is the browser's; read after hydration, so the server's never shows.
  useEffect(() => setZone(browserTimeZone()), []);
  const form = useRef<HTMLFormElement>(null);
  const [attempt, setAttempt] = useState(0);
  // After a failed submit, focus goes to the first invalid field, in the order of the form.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per failed attempt
  useEffect(() => {
    const first = fields.find((f) => errors[f.name]);
    if (first) form.current?.querySelector<HTMLElement>(`#field-${first.name}`)?.focus();
  }, [attempt]);

  const set = (name: string, value: InputValue) => setValues((v) => ({ ...v, [name]: value }));

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data: Record<string, unknown> = {};
    const local: Record<string, string> = {};
    for (const f of fields) {
      const raw = values[f.name] ?? "";
      // Edits send only what changed (PATCH is partial); creates leave empty fields to the defaults.
      if (record && raw === initial[f.name]) continue;
      const parsed = fromInput(f, raw);
      if (!parsed.ok) {
        local[f.name] = parsed.error;
        continue;
      }
      if (parsed.value === null && !record) continue;
      data[f.name] = parsed.value;
    }
    setErrors(local);
    setFormError(null);
    if (Object.keys(local).length > 0) {
      setAttempt((n) => n + 1);
      return;
    }
    setSaving(true);
    try {
      const saved = await onSubmit(data);
      onSaved(saved);
    } catch (e) {
      const err = toApiError(e);
      const known = new Set(fields.map((f) => f.name));
      const atFields: Record<string, string> = {};
      const elsewhere: string[] = [];
      const mark = (name: string, message: string) => {
        atFields[name] = atFields[name] ? `${atFields[name]}; ${message}` : message;
      };
      for (const [name, message] of Object.entries(err.fieldErrors)) {
        if (known.has(name)) mark(name, message);
        else elsewhere.push(name ? `${humanize(name)}: ${message}` : message);
      }
      // A failed rule names no field in the body: the contract says which fields it reads, and
      // its message (or its error name) is what the user sees at those fields.
      const details = err.details && typeof err.details === "object" ? (err.details as Record<string, unknown>) : {};
      const rule = typeof details.rule === "string" ? rules[details.rule] : undefined;
      const ruleFields = rule ? rule.fields.filter((n) => known.has(n)) : [];
      if (rule && ruleFields.length > 0) for (const n of ruleFields) mark(n, rule.message);
      else if (rule) elsewhere.push(rule.message);
      const nulls = Array.isArray(details.null_fields) ? details.null_fields.map(String) : [];
      for (const n of nulls) if (known.has(n)) mark(n, "This field is required.");
      setErrors(atFields);
      const count = Object.keys(atFields).length;
      if (count > 0) {
        const names = fields.filter((f) => atFields[f.name]).map((f) => f.label);
        setFormError(
          `${count === 1 ? "1 field needs" : `${count} fields need`} attention: ${names.join(", ")}.${elsewhere.length > 0 ? ` ${elsewhere.join("; ")}` : ""}`,
        );
      } else {
        setFormError(elsewhere.length > 0 && err.status === 422 ? elsewhere.join("; ") : err.message);
      }
      setAttempt((n) => n + 1);
    } finally {
      setSaving(false);
    }
  }

  return (
    <form ref={form} noValidate onSubmit={submit} data-testid={testId} className="space-y-6">
      {formError ? <ErrorNotice testId="form-error">{formError}</ErrorNotice> : null}
      {refs.error ? <ErrorNotice>Could not load the choices of a reference field: {refs.error}</ErrorNotice> : null}
      <div className="grid gap-x-6 gap-y-5 md:grid-cols-2">
        {fields.map((f) => {
          const id = `field-${f.name}`;
          const error = errors[f.name];
          const wide = f.type === "text" || f.type === "object";
          const common = {
            id,
            name: f.name,
            "data-testid": id,
            "aria-invalid": error ? true : undefined,
            "aria-required": f.required || undefined,
            "aria-describedby": error ? `${id}-error` : undefined,
          } as const;
          let control: ReactNode;
          if (f.type === "boolean" && !f.enumValues) {
            control = (
              <div className="flex h-9 items-center gap-2">
                <Checkbox {...common} checked={values[f.name] === true} onChange={(e) => set(f.name, e.target.checked)} />
                {f.description ? <span className="text-muted-foreground text-sm">{f.description}</span> : null}
              </div>
            );
          } else if (f.reference) {
            const options = refs.options[f.reference] ?? [];
            control = (
              <Select
                {...common}
                value={String(values[f.name] ?? "")}
                onChange={(e) => set(f.name, e.target.value)}
                disabled={refs.loading}
              >
                <option value="">{refs.loading ? "Loading…" : f.required ? "Select…" : "None"}</option>
                {options.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </Select>
            );
          } else if (f.enumValues) {
            control = (
              <Select {...common} value={String(values[f.name] ?? "")} onChange={(e) => set(f.name, e.target.value)}>
                <option value="">{f.required ? "Select…" : "None"}</option>
                {f.enumValues.map((v) => (
                  <option key={String(v)} value={String(v)}>
                    {humanize(v)}
                  </option>
                ))}
              </Select>
            );
          } else if (f.type === "text" || f.type === "object") {
            control = (
              <Textarea
                {...common}
                rows={f.type === "object" ? 4 : 3}
                className={cn(f.type === "object" && "font-mono")}
                placeholder={f.type === "object" ? "{ }" : undefined}
                value={String(values[f.name] ?? "")}
                onChange={(e) => set(f.name, e.target.value)}
              />
            );
          } else {
            control = (
              <Input
                {...common}
                type={inputType(f)}
                step={f.type === "integer" ? 1 : f.type === "number" ? "any" : undefined}
                placeholder={f.type === "array" ? "Comma-separated values" : undefined}
                value={String(values[f.name] ?? "")}
                onChange={(e) => set(f.name, e.target.value)}
              />
            );
          }
          return (
            <div key={f.name} className={cn("space-y-2", wide && "md:col-span-2")}>
              <Label htmlFor={id}>
                {f.label}
                {f.type === "datetime" && zone ? <span className="text-muted-foreground font-normal">({zone})</span> : null}
                {f.required ? (
                  <span className="text-destructive" title="Required" data-required="true">
                    *
                  </span>
                ) : null}
              </Label>
              {control}
              {error ? (
                <p id={`${id}-error`} data-testid={`field-error-${f.name}`} className="text-destructive text-sm">
                  {error}
                </p>
              ) : f.description && f.type !== "boolean" ? (
                <p className="text-muted-foreground text-xs">{f.description}</p>
              ) : null}
            </div>
          );
        })}
      </div>
      <div className="flex items-center justify-end gap-2 border-t pt-6">
        {onCancel ? (
          <Button type="button" variant="outline" onClick={onCancel}>
            Cancel
          </Button>
        ) : cancelHref ? (
          <Link href={cancelHref} className={buttonVariants({ variant: "outline" })}>
            Cancel
          </Link>
        ) : null}
        <Button type="submit" disabled={saving} data-testid="form-submit">
          {saving ? <LoaderCircle className="animate-spin" /> : null}
          {submitLabel}
        </Button>
      </div>
    </form>
  );
}

export { RecordForm };
