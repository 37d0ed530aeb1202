"use client";

import {
  type Announcements,
  type CollisionDetection,
  DndContext,
  type DragEndEvent,
  type KeyboardCoordinateGetter,
  KeyboardSensor,
  MouseSensor,
  pointerWithin,
  rectIntersection,
  TouchSensor,
  type UniqueIdentifier,
  useDraggable,
  useDroppable,
  useSensor,
  useSensors,
} from "@dnd-kit/core";
import { type ReactNode, useEffect, useRef, useState } from "react";
import { ErrorNotice } from "@/components/error-notice";
import { FieldValue } from "@/components/field-value";
import { Link } from "@/components/link";
import { notify } from "@/components/toaster";
import { Badge } from "@/components/ui/badge";
import { cx } from "@/lib/cx";
import { categoryTone, type Tone } from "@/lib/display";
import { toApiError } from "@/lib/request";
import { type ApiRecord, allowedTargets, type FieldSpec, readField, stateOf, type WorkflowSpec } from "@/lib/schema";

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

/** Pointer first (the column under the pointer); the keyboard has no pointer, so rectangles decide. */
const collide: CollisionDetection = (args) => {
  const hits = pointerWithin(args);
  return hits.length > 0 ? hits : rectIntersection(args);
};

function Column({ id, drop, className, children }: { id: string; drop: string | undefined; className: string; children: ReactNode }) {
  const { setNodeRef } = useDroppable({ id });
  return (
    <section
      ref={setNodeRef}
      data-testid={`kanban-column-${id}`}
      data-state={id}
      data-drop={drop}
      aria-labelledby={`kanban-title-${id}`}
      className={className}
    >
      {children}
    </section>
  );
}

function Card({
  id,
  name,
  locked,
  className,
  children,
}: {
  id: string;
  name: string;
  locked: boolean;
  className: string;
  children: ReactNode;
}) {
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, transform } = useDraggable({
    id,
    disabled: locked,
    // A group, not a button: the card holds a link to the record.
    attributes: { role: "group", roleDescription: locked ? "card" : "draggable card" },
  });
  return (
    // biome-ignore lint/a11y/useSemanticElements: a draggable card holding a link; a fieldset would announce a form group
    <div
      ref={(node) => {
        setNodeRef(node);
        setActivatorNodeRef(node);
      }}
      {...attributes}
      {...listeners}
      role="group"
      aria-label={name}
      data-testid={`kanban-card-${id}`}
      data-terminal={locked ? "true" : "false"}
      style={transform ? { transform: `translate3d(${transform.x}px, ${transform.y}px, 0)`, zIndex: 20 } : undefined}
      className={className}
    >
      {children}
    </div>
  );
}

/**
 * The kanban view: one column per workflow state, moved with dnd-kit's mouse, touch and keyboard
 * sensors (this module is loaded only where a board is shown). With the keyboard: focus a card,
 * Space or Enter picks it up, Left/Right moves it one column, Space or Enter drops it, Escape
 * cancels; every step is announced. A column accepts a card only when the workflow allows the
 * move (type overrides included); the server has the last word, and a refused move (a guard)
 * puts the card back with the server's reason.
 */
function KanbanBoard<T extends ApiRecord>({
  records,
  workflow,
  entityLabel,
  cardFields,
  labels,
  href,
  onMove,
  testId,
}: {
  records: readonly T[];
  workflow: WorkflowSpec;
  entityLabel: string;
  cardFields: readonly FieldSpec[];
  labels: Readonly<Record<string, Readonly<Record<string, string>>>>;
  href: (record: T) => string;
  onMove: (id: string, state: string) => Promise<T>;
  testId: string;
}) {
  const [items, setItems] = useState<readonly T[]>(records);
  const [dragging, setDragging] = useState<T | null>(null);
  const [over, setOver] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<string | null>(null);
  const refocus = useRef<string | null>(null);

  useEffect(() => setItems(records), [records]);
  // A moved card is rendered in another column, which drops the keyboard focus: put it back.
  useEffect(() => {
    if (!refocus.current) return;
    document.querySelector<HTMLElement>(`[data-testid="kanban-card-${refocus.current}"]`)?.focus();
    refocus.current = null;
  });

  const ids = workflow.states.map((s) => s.name);
  const label = (state: UniqueIdentifier | undefined) => workflow.states.find((s) => s.name === state)?.label ?? String(state);
  const [titleField, ...restFields] = cardFields;
  const nameOf = (r: T | undefined): string => {
    if (!r) return entityLabel.toLowerCase();
    const v = titleField ? readField(r, titleField.name) : null;
    return v === null || v === undefined || v === "" ? r.id.slice(0, 8) : (labels[titleField?.name ?? ""]?.[String(v)] ?? String(v));
  };
  const find = (id: UniqueIdentifier) => items.find((r) => r.id === id);

  // One Left/Right press moves the card to the neighbouring column (dnd-kit's default moves 25 px).
  const toColumn: KeyboardCoordinateGetter = (event, { context, currentCoordinates }) => {
    const step = event.code === "ArrowRight" ? 1 : event.code === "ArrowLeft" ? -1 : 0;
    if (step === 0) return undefined;
    event.preventDefault();
    const active = context.active ? find(context.active.id) : undefined;
    const from = ids.indexOf(context.over ? String(context.over.id) : active ? stateOf(workflow, active) : "");
    const rect = context.droppableRects.get(ids[from + step] ?? "");
    return rect ? { x: rect.left + 8, y: rect.top + 56 } : currentCoordinates;
  };
  const sensors = useSensors(
    useSensor(MouseSensor, { activationConstraint: { distance: 5 } }),
    // A short press picks a card up on touch screens; a swipe still scrolls the board.
    useSensor(TouchSensor, { activationConstraint: { delay: 200, tolerance: 8 } }),
    useSensor(KeyboardSensor, { coordinateGetter: toColumn }),
  );

  const allowed = (r: T | undefined, state: string) => (r ? allowedTargets(workflow, r).includes(state) : false);
  const announcements: Announcements = {
    onDragStart: ({ active }) => {
      const r = find(active.id);
      return `Picked up ${nameOf(r)} in ${label(r ? stateOf(workflow, r) : undefined)}. Left and right arrows move it between columns, Space or Enter drops it, Escape cancels.`;
    },
    onDragOver: ({ active, over: target }) => {
      const r = find(active.id);
      if (!target) return `${nameOf(r)} is not over a column.`;
      // Over its own column (right after the pick-up): nothing new to say, and saying it would
      // replace the pick-up message in the same render, before a screen reader reads it.
      if (r && stateOf(workflow, r) === target.id) return undefined;
      return `${nameOf(r)} is over ${label(target.id)}.${allowed(r, String(target.id)) ? "" : " It cannot move there."}`;
    },
    onDragEnd: ({ active, over: target }) => {
      const r = find(active.id);
      const from = label(r ? stateOf(workflow, r) : undefined);
      if (!target || (r && stateOf(workflow, r) === target.id)) return `${nameOf(r)} stays in ${from}.`;
      if (!allowed(r, String(target.id))) return `${nameOf(r)} cannot move from ${from} to ${label(target.id)}. It stays in ${from}.`;
      return `Dropped ${nameOf(r)} in ${label(target.id)}.`;
    },
    onDragCancel: ({ active }) => {
      const r = find(active.id);
      return `Move cancelled. ${nameOf(r)} stays in ${label(r ? stateOf(workflow, r) : undefined)}.`;
    },
  };

  async function drop({ active, over: target }: DragEndEvent) {
    setDragging(null);
    setOver(null);
    const before = find(active.id);
    const state = target ? String(target.id) : "";
    if (!before || !target || stateOf(workflow, before) === state || !allowed(before, state)) return;
    setError(null);
    refocus.current = before.id;
    setItems((list) => list.map((r) => (r.id === before.id ? { ...r, state } : r)));
    setPending(before.id);
    try {
      const saved = await onMove(before.id, state);
      setItems((list) => list.map((r) => (r.id === before.id ? saved : r)));
      notify(`${entityLabel} “${nameOf(before)}” moved to ${label(state)}.`);
    } catch (e) {
      refocus.current = before.id;
      setItems((list) => list.map((r) => (r.id === before.id ? before : r)));
      setError(`Could not move “${nameOf(before)}” to ${label(state)}: ${toApiError(e).message}`);
    } finally {
      setPending(null);
    }
  }

  return (
    <div className="space-y-4" data-testid={testId}>
      {error ? <ErrorNotice testId="kanban-error">{error}</ErrorNotice> : null}
      <DndContext
        sensors={sensors}
        collisionDetection={collide}
        accessibility={{
          announcements,
          screenReaderInstructions: {
            draggable:
              "To move this card, press Space or Enter, then the left and right arrow keys, then Space or Enter to drop it, or Escape to cancel.",
          },
        }}
        onDragStart={({ active }) => {
          setError(null);
          setDragging(find(active.id) ?? null);
        }}
        onDragOver={({ over: target }) => setOver(target ? String(target.id) : null)}
        onDragCancel={() => {
          setDragging(null);
          setOver(null);
        }}
        onDragEnd={drop}
      >
        <div className="flex gap-3 overflow-x-auto pb-4">
          {workflow.states.map((s) => {
            const cards = items.filter((r) => stateOf(workflow, r) === s.name);
            const tone = categoryTone(s.category);
            const valid = dragging !== null && allowed(dragging, s.name);
            const hovered = valid && over === s.name;
            return (
              <Column
                key={s.name}
                id={s.name}
                drop={dragging === null ? undefined : hovered ? "hover" : valid ? "valid" : "invalid"}
                className={cx(
                  "flex w-64 min-w-56 shrink-0 flex-col rounded-xl border border-t-4 transition-colors xl:w-auto xl:flex-1 xl:basis-0",
                  hovered
                    ? "border-blue-600 bg-blue-50 ring-2 ring-blue-600 dark:bg-blue-950"
                    : valid
                      ? "border-green-600 bg-green-50 ring-2 ring-green-600 dark:bg-green-950"
                      : cx("bg-muted", HEADER_TONES[tone]),
                )}
              >
                <div
                  className="flex items-center justify-between gap-2 px-3 pt-3 pb-2"
                  data-testid={`kanban-header-${s.name}`}
                  data-tone={tone}
                >
                  <h2 id={`kanban-title-${s.name}`} className="flex items-center gap-2 text-sm font-semibold">
                    <span className={cx("size-2 rounded-full", DOT_TONES[tone])} />
                    {s.label}
                  </h2>
                  <Badge variant="secondary" data-testid={`kanban-count-${s.name}`}>
                    {cards.length}
                  </Badge>
                </div>
                <div className="flex min-h-32 flex-1 flex-col gap-2 px-2 pb-3">
                  {cards.map((r) => {
                    const locked = s.terminal;
                    return (
                      <Card
                        key={r.id}
                        id={r.id}
                        name={`${nameOf(r)}, ${s.label}`}
                        locked={locked}
                        className={cx(
                          "bg-card text-card-foreground space-y-2 rounded-lg border p-3 text-sm shadow-xs transition-shadow outline-none focus-visible:ring-2 focus-visible:ring-ring",
                          locked
                            ? "border-dashed shadow-none"
                            : dragging?.id === r.id
                              ? "cursor-grabbing shadow-lg"
                              : "cursor-grab hover:shadow-md",
                          pending === r.id && "animate-pulse",
                        )}
                      >
                        {titleField ? (
                          <Link
                            href={href(r)}
                            draggable={false}
                            className="block leading-snug font-medium underline-offset-4 hover:underline"
                          >
                            <FieldValue field={titleField} value={readField(r, titleField.name)} labels={labels[titleField.name]} />
                          </Link>
                        ) : null}
                        {restFields.length > 0 ? (
                          <div className="text-muted-foreground flex flex-wrap items-center gap-x-3 gap-y-1 text-xs">
                            {restFields.map((f) => (
                              <span key={f.name} data-field={f.name} title={f.label}>
                                <FieldValue field={f} value={readField(r, f.name)} labels={labels[f.name]} />
                              </span>
                            ))}
                          </div>
                        ) : null}
                      </Card>
                    );
                  })}
                </div>
              </Column>
            );
          })}
        </div>
      </DndContext>
    </div>
  );
}

export { KanbanBoard };
