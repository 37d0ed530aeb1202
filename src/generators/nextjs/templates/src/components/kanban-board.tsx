"use client";

import Link from "next/link";
import { type DragEvent, useEffect, useState } from "react";

import { FieldValue } from "@/components/field-value";
import { ErrorNotice } from "@/components/page-state";
import { Badge } from "@/components/ui/badge";
import { toApiError } from "@/lib/api";
import { categoryTone, type Tone } from "@/lib/display";
import { type ApiRecord, allowedTargets, type FieldSpec, stateOf, valueOf, type WorkflowSpec } from "@/lib/schema";
import { cn } from "@/lib/utils";

const HEADER_TONES: Record<Tone, string> = {
  blue: "border-t-blue-500",
  yellow: "border-t-yellow-400",
  green: "border-t-green-500",
  gray: "border-t-zinc-400",
  red: "border-t-red-500",
  orange: "border-t-orange-500",
};

const DOT_TONES: Record<Tone, string> = {
  blue: "bg-blue-500",
  yellow: "bg-yellow-400",
  green: "bg-green-500",
  gray: "bg-zinc-400",
  red: "bg-red-500",
  orange: "bg-orange-500",
};

interface Drag {
  id: string;
  targets: readonly string[];
}

/**
 * The kanban view: one column per workflow state. Cards move by native HTML5 drag and drop; a
 * column accepts a card only when the workflow allows that move from the card's state (type
 * overrides included). A drop asks the server; the board then shows the server's answer, and a
 * refused move (a guard, say) puts the card back with the server's message.
 */
function KanbanBoard<T extends ApiRecord>({
  records,
  workflow,
  cardFields,
  labels,
  href,
  onMove,
  testId,
}: {
  records: readonly T[];
  workflow: WorkflowSpec;
  cardFields: readonly FieldSpec[];
  labels: Readonly<Record<string, Readonly<Record<string, string>>>>;
  href: (record: T) => string;
  onMove: (id: string, state: string) => Promise<T>;
  testId: string;
}) {
  const [items, setItems] = useState<readonly T[]>(records);
  const [drag, setDrag] = useState<Drag | null>(null);
  const [hover, setHover] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<string | null>(null);

  useEffect(() => setItems(records), [records]);

  const terminal = new Set(workflow.states.filter((s) => s.terminal).map((s) => s.name));
  const [titleField, ...restFields] = cardFields;

  function startDrag(event: DragEvent<HTMLDivElement>, record: T) {
    event.dataTransfer.setData("text/plain", record.id);
    event.dataTransfer.effectAllowed = "move";
    setError(null);
    setDrag({ id: record.id, targets: allowedTargets(workflow, record) });
  }

  function endDrag() {
    setDrag(null);
    setHover(null);
  }

  function over(event: DragEvent<HTMLDivElement>, state: string) {
    if (!drag?.targets.includes(state)) return;
    // Cancelling dragover is what marks the column as a drop target.
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    if (hover !== state) setHover(state);
  }

  function leave(event: DragEvent<HTMLDivElement>, state: string) {
    const next = event.relatedTarget;
    if (next instanceof Node && event.currentTarget.contains(next)) return;
    if (hover === state) setHover(null);
  }

  async function drop(event: DragEvent<HTMLDivElement>, state: string) {
    event.preventDefault();
    const current = drag;
    endDrag();
    if (!current?.targets.includes(state)) return;
    const before = items.find((r) => r.id === current.id);
    if (!before) return;
    setItems((list) => list.map((r) => (r.id === current.id ? { ...r, state } : r)));
    setPending(current.id);
    try {
      const saved = await onMove(current.id, state);
      setItems((list) => list.map((r) => (r.id === current.id ? saved : r)));
    } catch (e) {
      const err = toApiError(e);
      setItems((list) => list.map((r) => (r.id === current.id ? before : r)));
      const to = workflow.states.find((s) => s.name === state)?.label ?? state;
      setError(`Could not move the card to ${to}: ${err.message}`);
    } finally {
      setPending(null);
    }
  }

  return (
    <div className="space-y-4 select-none" data-testid={testId}>
      {error ? <ErrorNotice testId="kanban-error">{error}</ErrorNotice> : null}
      <div className="flex gap-3 overflow-x-auto pb-4">
        {workflow.states.map((s) => {
          const cards = items.filter((r) => stateOf(workflow, r) === s.name);
          const tone = categoryTone(s.category);
          const valid = drag !== null && drag.targets.includes(s.name);
          const hovered = valid && hover === s.name;
          return (
            <div
              key={s.name}
              data-testid={`kanban-column-${s.name}`}
              data-state={s.name}
              data-category={s.category}
              data-drop={drag === null ? undefined : hovered ? "hover" : valid ? "valid" : "invalid"}
              onDragEnter={(e) => over(e, s.name)}
              onDragOver={(e) => over(e, s.name)}
              onDragLeave={(e) => leave(e, s.name)}
              onDrop={(e) => drop(e, s.name)}
              className={cn(
                "flex min-w-56 flex-1 basis-0 flex-col rounded-xl border border-t-4 transition-colors",
                // Exactly one look per column: cn does not resolve conflicting utilities.
                hovered
                  ? "border-blue-500 bg-blue-50 ring-2 ring-blue-500/50 dark:bg-blue-950/40"
                  : valid
                    ? "border-green-500 bg-green-50 ring-2 ring-green-500/40 dark:bg-green-950/40"
                    : cn("bg-muted/40", HEADER_TONES[tone], drag !== null && "opacity-60"),
              )}
            >
              <div className="flex items-center justify-between gap-2 px-3 pt-3 pb-2" data-testid={`kanban-header-${s.name}`} data-tone={tone}>
                <div className="flex items-center gap-2 text-sm font-semibold">
                  <span className={cn("size-2 rounded-full", DOT_TONES[tone])} />
                  {s.label}
                </div>
                <Badge variant="secondary" data-testid={`kanban-count-${s.name}`}>
                  {cards.length}
                </Badge>
              </div>
              <div className="flex min-h-32 flex-1 flex-col gap-2 px-2 pb-3">
                {cards.map((r) => {
                  const locked = terminal.has(stateOf(workflow, r));
                  return (
                    <div
                      key={r.id}
                      data-testid={`kanban-card-${r.id}`}
                      data-terminal={locked ? "true" : "false"}
                      draggable={!locked}
                      onDragStart={(e) => startDrag(e, r)}
                      onDragEnd={endDrag}
                      className={cn(
                        "bg-card space-y-2 rounded-lg border p-3 text-sm shadow-xs transition-shadow",
                        locked
                          ? "cursor-not-allowed opacity-50"
                          : drag?.id === r.id
                            ? "cursor-grabbing opacity-40"
                            : "cursor-grab hover:shadow-md active:cursor-grabbing",
                        pending === r.id && "animate-pulse",
                      )}
                    >
                      {titleField ? (
                        <Link href={href(r)} draggable={false} className="block leading-snug font-medium underline-offset-4 hover:underline">
                          <FieldValue field={titleField} value={valueOf(r, titleField.name)} labels={labels[titleField.name]} />
                        </Link>
                      ) : null}
                      {restFields.length > 0 ? (
                        <div className="text-muted-foreground flex flex-wrap items-center gap-x-3 gap-y-1 text-xs">
                          {restFields.map((f) => (
                            <span key={f.name} data-field={f.name} title={f.label}>
                              <FieldValue field={f} value={valueOf(r, f.name)} labels={labels[f.name]} />
                            </span>
                          ))}
                        </div>
                      ) : null}
                    </div>
                  );
                })}
              </div>
            </div>
          );
        })}
      </div>
    </div>
  );
}

export { KanbanBoard };
