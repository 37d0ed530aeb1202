"use client";

import { useRouter } from "next/navigation";
import { type ReactNode, Suspense, useEffect, useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { ArrowLeft, ArrowRight, LoaderCircle, Pencil, Trash } from "@/components/icons";
import { Link } from "@/components/link";
import { PageHeader } from "@/components/page-header";
import { ErrorNotice, ErrorState, LoadingState } from "@/components/page-state";
import { RecordDetail } from "@/components/record-detail";
import { notify } from "@/components/toaster";
import { Badge } from "@/components/ui/badge";
import { Button, buttonVariants } from "@/components/ui/button";
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
  appTitle,
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
  /** The application's name, the last part of every document title. */
  appTitle: string;
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
  const [confirming, setConfirming] = useState(false);
  const name = state.status === "ready" ? heading(state.data) : "";
  // The document title names the record (the layout's title says only the entity).
  useEffect(() => {
    if (name) document.title = `${name} · ${listTitle} · ${appTitle}`;
  }, [name, listTitle, appTitle]);

  const back = (
    <Link href={listHref} className="text-muted-foreground hover:text-foreground inline-flex items-center gap-1 text-sm">
      <ArrowLeft className="size-4" />
      {listTitle}
    </Link>
  );

  if (state.status === "loading") {
    return (
      <div className="space-y-6">
        {back}
        <PageHeader title={entityLabel} />
        <LoadingState />
      </div>
    );
  }
  if (state.status === "error") {
    // An unknown record is a state of its own: a heading, the reason and the way back, no retry.
    if (state.error.status === 404) {
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
        <ErrorState error={state.error} onRetry={reload} />
      </div>
    );
  }
  const record = state.data;
  const current = workflow ? workflow.states.find((s) => s.name === stateOf(workflow, record)) : undefined;
  const targets = workflow ? allowedTargets(workflow, record) : [];

  async function move(target: string) {
    if (!transition) return;
    setBusy(target);
    setActionError(null);
    try {
      const saved = await transition(record.id, target);
      setData(saved);
      notify(`${entityLabel} “${heading(saved)}” moved to ${workflow?.states.find((s) => s.name === target)?.label ?? target}.`);
    } catch (e) {
      setActionError(toApiError(e).message);
    } finally {
      setBusy(null);
    }
  }

  async function destroy() {
    setConfirming(false);
    setBusy("delete");
    setActionError(null);
    try {
      await remove(record.id);
      notify(`${entityLabel} “${name}” deleted.`);
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
              <Button variant="destructive" onClick={() => setConfirming(true)} disabled={busy !== null} data-testid="delete-record">
                {busy === "delete" ? <LoaderCircle className="animate-spin" /> : <Trash />}
                Delete
              </Button>
            </>
          )
        }
      />
      {actionError ? <ErrorNotice testId="action-error">{actionError}</ErrorNotice> : null}
      <ConfirmDialog
        open={confirming}
        title={`Delete ${entityLabel.toLowerCase()} “${name}”?`}
        description="This cannot be undone from here."
        confirmLabel="Delete"
        onConfirm={destroy}
        onCancel={() => setConfirming(false)}
      />
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
                <Button
                  key={t}
                  variant="outline"
                  size="sm"
                  disabled={busy !== null}
                  onClick={() => move(t)}
                  data-testid={`transition-${t}`}
                >
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
                if (saved) {
                  setData(saved);
                  notify(`${entityLabel} “${heading(saved)}” saved.`);
                }
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
