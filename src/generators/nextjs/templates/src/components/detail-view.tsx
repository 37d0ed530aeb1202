"use client";

import { ArrowLeft, ArrowRight, LoaderCircle, Pencil, Trash } from "@/components/icons";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { type ReactNode, Suspense, useState } from "react";

import { PageHeader } from "@/components/page-header";
import { ErrorNotice, ErrorState, LoadingState } from "@/components/page-state";
import { RecordDetail } from "@/components/record-detail";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { useAsync } from "@/hooks/use-async";
import { type ReferenceSource, useReferences } from "@/hooks/use-references";
import { toApiError } from "@/lib/api";
import { categoryTone } from "@/lib/display";
import { type ApiRecord, allowedTargets, type FieldSpec, stateOf, type WorkflowSpec } from "@/lib/schema";

/**
 * A record's page: all its fields, its workflow moves (when it has a state machine), and edit and
 * delete. Edit swaps the read view for the form in place.
 */
function DetailView<T extends ApiRecord>({
  id,
  entityLabel,
  listHref,
  listTitle,
  fields,
  references,
  heading,
  load,
  remove,
  workflow,
  transition,
  renderForm,
}: {
  id: string;
  entityLabel: string;
  listHref: string;
  listTitle: string;
  fields: readonly FieldSpec[];
  references: Readonly<Record<string, ReferenceSource>>;
  heading: (record: T) => string;
  load: (id: string) => Promise<T>;
  remove: (id: string) => Promise<void>;
  workflow?: WorkflowSpec;
  transition?: (id: string, state: string) => Promise<T>;
  renderForm: (record: T, done: (saved: T | null) => void) => ReactNode;
}) {
  const router = useRouter();
  const { state, reload, setData } = useAsync(() => load(id), [id]);
  const refs = useReferences(references);
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);

  const back = (
    <Link href={listHref} className="text-muted-foreground hover:text-foreground inline-flex items-center gap-1 text-sm">
      <ArrowLeft className="size-4" />
      {listTitle}
    </Link>
  );

  if (state.status === "loading") return <div className="space-y-6">{back}<LoadingState /></div>;
  if (state.status === "error") return <div className="space-y-6">{back}<ErrorState error={state.error} onRetry={reload} /></div>;
  const record = state.data;
  const current = workflow ? workflow.states.find((s) => s.name === stateOf(workflow, record)) : undefined;
  const targets = workflow ? allowedTargets(workflow, record) : [];

  async function move(target: string) {
    if (!transition) return;
    setBusy(target);
    setActionError(null);
    try {
      setData(await transition(record.id, target));
    } catch (e) {
      setActionError(toApiError(e).message);
    } finally {
      setBusy(null);
    }
  }

  async function destroy() {
    if (!window.confirm(`Delete this ${entityLabel.toLowerCase()}?`)) return;
    setBusy("delete");
    setActionError(null);
    try {
      await remove(record.id);
      router.push(listHref);
    } catch (e) {
      setActionError(toApiError(e).message);
      setBusy(null);
    }
  }

  return (
    <div className="space-y-6">
      {back}
      <PageHeader
        title={
          <span className="flex flex-wrap items-center gap-3">
            <span data-testid="detail-heading">{heading(record)}</span>
            {current ? (
              <Badge variant={categoryTone(current.category)} data-testid="detail-state">
                {current.label}
              </Badge>
            ) : null}
          </span>
        }
        description={entityLabel}
        actions={
          editing ? null : (
            <>
              <Button variant="outline" onClick={() => setEditing(true)} data-testid="edit-record">
                <Pencil />
                Edit
              </Button>
              <Button variant="destructive" onClick={destroy} disabled={busy !== null} data-testid="delete-record">
                {busy === "delete" ? <LoaderCircle className="animate-spin" /> : <Trash />}
                Delete
              </Button>
            </>
          )
        }
      />
      {actionError ? <ErrorNotice testId="action-error">{actionError}</ErrorNotice> : null}
      {workflow && current && !editing ? (
        <Card>
          <CardHeader>
            <CardTitle className="text-base">Workflow</CardTitle>
            <CardDescription>
              {targets.length > 0 ? `Currently ${current.label}. Move to:` : `${current.label} is a final state.`}
            </CardDescription>
          </CardHeader>
          {targets.length > 0 ? (
            <CardContent className="flex flex-wrap gap-2">
              {targets.map((t) => (
                <Button key={t} variant="outline" size="sm" disabled={busy !== null} onClick={() => move(t)} data-testid={`transition-${t}`}>
                  {busy === t ? <LoaderCircle className="animate-spin" /> : <ArrowRight />}
                  {workflow.states.find((s) => s.name === t)?.label ?? t}
                </Button>
              ))}
            </CardContent>
          ) : null}
        </Card>
      ) : null}
      <Card>
        <CardContent>
          {editing ? (
            <Suspense fallback={<LoadingState />}>
              {renderForm(record, (saved) => {
                setEditing(false);
                if (saved) setData(saved);
              })}
            </Suspense>
          ) : (
            <RecordDetail record={record} fields={fields} labels={refs.labels} />
          )}
        </CardContent>
      </Card>
    </div>
  );
}

export { DetailView };
