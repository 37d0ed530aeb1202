"use client";

import { useRouter } from "next/navigation";
import { type ReactNode, useEffect, useState } from "react";

import { ConfirmDialog } from "@/components/confirm-dialog";
import { EditDone } from "@/components/edit-context";
import { loadFormIsland } from "@/components/form-island-lazy";
import { notify } from "@/components/toaster";
import { callApi } from "@/lib/actions";

/** What the server renders for the island: icons and button classes, so none of that code ships. */
export interface DetailLook {
  edit: ReactNode;
  remove: ReactNode;
  move: ReactNode;
  busy: ReactNode;
  outline: string;
  outlineSmall: string;
  destructive: string;
  alert: ReactNode;
}

const card = "bg-card text-card-foreground flex flex-col gap-6 rounded-xl border py-6 shadow-sm";

/**
 * The interactive part of a record's page: Edit swaps the server-rendered fields (`read`) for the
 * server-rendered form (`form`) in place; Delete asks first (an accessible dialog); the workflow
 * moves call the API through a Server Action. After a change the server renders the page again
 * (router.refresh) and a toast says what happened.
 */
export function DetailBody({
  name,
  entityLabel,
  listHref,
  path,
  title,
  read,
  form,
  moves,
  current,
  look,
}: {
  name: string;
  entityLabel: string;
  listHref: string;
  path: string;
  title: ReactNode;
  read: ReactNode;
  form: ReactNode;
  moves: readonly { name: string; label: string }[];
  current: { label: string } | null;
  look: DetailLook;
}) {
  const router = useRouter();
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  // The edit form's code arrives after the page, before anyone presses Edit.
  useEffect(() => {
    void loadFormIsland();
  }, []);

  async function move(target: { name: string; label: string }) {
    setBusy(target.name);
    setActionError(null);
    const result = await callApi("PUT", `${path}/state`, { state: target.name });
    setBusy(null);
    if (!result.ok) return setActionError(result.message);
    notify(`${entityLabel} “${name}” moved to ${target.label}.`);
    router.refresh();
  }

  async function destroy() {
    setConfirming(false);
    setBusy("delete");
    setActionError(null);
    const result = await callApi("DELETE", path);
    if (!result.ok) {
      setBusy(null);
      return setActionError(result.message);
    }
    notify(`${entityLabel} “${name}” deleted.`);
    router.push(listHref);
  }

  return (
    <>
      <div data-slot="page-header" className="flex flex-wrap items-start justify-between gap-4">
        <div className="space-y-1">
          <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
          <p className="text-muted-foreground text-sm">{entityLabel}</p>
        </div>
        {editing ? null : (
          <div className="flex items-center gap-2">
            <button type="button" className={look.outline} onClick={() => setEditing(true)} data-testid="edit-record">
              {look.edit}
              Edit
            </button>
            <button
              type="button"
              className={look.destructive}
              onClick={() => setConfirming(true)}
              disabled={busy !== null}
              data-testid="delete-record"
            >
              {busy === "delete" ? look.busy : look.remove}
              Delete
            </button>
          </div>
        )}
      </div>
      {actionError ? (
        <div
          role="alert"
          data-testid="action-error"
          className="border-destructive/30 bg-destructive/5 text-destructive flex items-start gap-2 rounded-lg border px-4 py-3 text-sm"
        >
          {look.alert}
          <div>{actionError}</div>
        </div>
      ) : null}
      <ConfirmDialog
        open={confirming}
        title={`Delete ${entityLabel.toLowerCase()} “${name}”?`}
        description="This cannot be undone from here."
        confirmLabel="Delete"
        cancelClass={look.outline}
        confirmClass={look.destructive}
        onConfirm={destroy}
        onCancel={() => setConfirming(false)}
      />
      {current && !editing ? (
        <div className={card}>
          <div className="grid gap-1.5 px-6">
            <h2 className="text-base leading-none font-semibold">Workflow</h2>
            <p className="text-muted-foreground text-sm">
              {moves.length > 0 ? `Currently ${current.label}. Move to:` : `${current.label} is a final state.`}
            </p>
          </div>
          {moves.length > 0 ? (
            <div className="flex flex-wrap gap-2 px-6">
              {moves.map((t) => (
                <button
                  type="button"
                  key={t.name}
                  className={look.outlineSmall}
                  disabled={busy !== null}
                  onClick={() => move(t)}
                  data-testid={`transition-${t.name}`}
                >
                  {busy === t.name ? look.busy : look.move}
                  {t.label}
                </button>
              ))}
            </div>
          ) : null}
        </div>
      ) : null}
      <div className={card}>
        <div className="px-6">
          {editing ? (
            <EditDone.Provider
              value={(saved) => {
                setEditing(false);
                if (saved) router.refresh();
              }}
            >
              {form}
            </EditDone.Provider>
          ) : (
            read
          )}
        </div>
      </div>
    </>
  );
}
