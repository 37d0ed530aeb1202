import type { ReactNode } from "react";

import { DetailBody } from "@/components/detail-body";
import { ArrowLeft, ArrowRight, LoaderCircle, Pencil, Trash, TriangleAlert } from "@/components/icons";
import { Link } from "@/components/link";
import { PageHeader } from "@/components/page-header";
import { ErrorState } from "@/components/page-state";
import { RecordDetail } from "@/components/record-detail";
import { Badge } from "@/components/ui/badge";
import { buttonVariants } from "@/components/ui/button";
import { categoryTone } from "@/lib/display";
import { loadReferences, type ReferenceOption, type ReferenceSource } from "@/lib/references";
import { toApiError } from "@/lib/request";
import { type ApiRecord, allowedTargets, type FieldSpec, stateOf, type WorkflowSpec } from "@/lib/schema";
import { requestZone } from "@/lib/server-context";

/**
 * A record's page, rendered on the server: the heading (with its workflow state), all its fields,
 * and the body island (`body`) with edit, delete and the workflow moves. An unknown record is a
 * state of its own: a heading, the reason and the way back, no retry.
 */
export async function DetailView<T extends ApiRecord>({
  id,
  entityLabel,
  listHref,
  listTitle,
  path,
  fields,
  references,
  headingField,
  load,
  workflow,
  form,
}: {
  id: string;
  entityLabel: string;
  listHref: string;
  listTitle: string;
  path: string;
  fields: readonly FieldSpec[];
  references: Readonly<Record<string, ReferenceSource>>;
  headingField: string;
  load: (id: string) => Promise<T>;
  workflow?: WorkflowSpec;
  /** The edit form of the record, rendered on the server (shown when Edit is pressed). */
  form: (record: T, options: Readonly<Record<string, readonly ReferenceOption[]>>, zone: string) => ReactNode;
}) {
  const [result, refs, zone] = await Promise.all([
    load(id).then(
      (record) => ({ ok: true as const, record }),
      (e: unknown) => ({ ok: false as const, error: toApiError(e) }),
    ),
    loadReferences(references),
    requestZone(),
  ]);
  const back = (
    <Link href={listHref} className="text-muted-foreground hover:text-foreground inline-flex items-center gap-1 text-sm">
      <ArrowLeft className="size-4" />
      {listTitle}
    </Link>
  );
  if (!result.ok) {
    if (result.error.status === 404) {
      return (
        <div className="space-y-6" data-testid="not-found">
          <PageHeader
            title={`${entityLabel} not found`}
            description={`No ${entityLabel.toLowerCase()} has the id ${id}. It may have been deleted.`}
          />
          <Link href={listHref} className={buttonVariants({ variant: "outline" })}>
            <ArrowLeft />
            Back to {listTitle}
          </Link>
        </div>
      );
    }
    return (
      <div className="space-y-6">
        {back}
        <PageHeader title={entityLabel} />
        <ErrorState error={result.error} retry={`${listHref}/${encodeURIComponent(id)}`} />
      </div>
    );
  }
  const record = result.record;
  const value = headingField === "id" ? null : (record as unknown as Record<string, unknown>)[headingField];
  const name = value === null || value === undefined || value === "" ? record.id : String(value);
  const current = workflow ? workflow.states.find((s) => s.name === stateOf(workflow, record)) : undefined;
  const label = (state: string) => workflow?.states.find((s) => s.name === state)?.label ?? state;
  const moves = workflow ? allowedTargets(workflow, record).map((t) => ({ name: t, label: label(t) })) : [];
  const title = (
    <span className="flex flex-wrap items-center gap-3">
      <span data-testid="detail-heading">{name}</span>
      {current ? (
        <Badge variant={categoryTone(current.category)} data-testid="detail-state">
          {current.label}
        </Badge>
      ) : null}
    </span>
  );
  return (
    <div className="space-y-6">
      {back}
      <DetailBody
        name={name}
        entityLabel={entityLabel}
        listHref={listHref}
        path={path}
        title={title}
        read={<RecordDetail record={record} fields={fields} labels={refs.labels} zone={zone} />}
        form={form(record, refs.options, zone)}
        moves={moves}
        current={current ? { label: current.label } : null}
        look={{
          edit: <Pencil />,
          remove: <Trash />,
          move: <ArrowRight />,
          busy: <LoaderCircle className="animate-spin" />,
          alert: <TriangleAlert className="mt-0.5 size-4 shrink-0" />,
          outline: buttonVariants({ variant: "outline" }),
          outlineSmall: buttonVariants({ variant: "outline", size: "sm" }),
          destructive: buttonVariants({ variant: "destructive" }),
        }}
      />
    </div>
  );
}
