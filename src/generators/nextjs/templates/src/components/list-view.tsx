"use client";

import { ChevronLeft, ChevronRight, Columns3, Plus, Rows3 } from "@/components/icons";
import Link from "next/link";
import { type ReactNode, useState } from "react";

import { PageHeader } from "@/components/page-header";
import { EmptyState, ErrorState, LoadingState } from "@/components/page-state";
import { Button, buttonVariants } from "@/components/ui/button";
import { Select } from "@/components/ui/select";
import { useAsync } from "@/hooks/use-async";
import type { ListFilters, ListResult } from "@/lib/api";
import { humanize } from "@/lib/display";
import type { ApiRecord, FieldSpec } from "@/lib/schema";
import { cn } from "@/lib/utils";

export type ViewType = "table" | "kanban";

/** Rows per table page (the API's default `limit`). */
const PAGE_SIZE = 100;
/** The board shows every record at once, up to the API's largest page. */
const BOARD_LIMIT = 1000;

/**
 * A list page: header, filter bar, the declared views (with a Table/Kanban toggle when both are
 * declared), and the loading, empty and error states around them.
 */
function ListView<T extends ApiRecord>({
  title,
  entityLabel,
  entityLabelPlural,
  newHref,
  views,
  defaultView,
  filters,
  load,
  renderTable,
  renderKanban,
}: {
  title: string;
  entityLabel: string;
  entityLabelPlural: string;
  newHref: string;
  views: readonly ViewType[];
  defaultView: ViewType;
  filters: readonly FieldSpec[];
  load: (limit: number, offset: number, filters: ListFilters) => Promise<ListResult<T>>;
  renderTable?: (rows: readonly T[]) => ReactNode;
  renderKanban?: (rows: readonly T[]) => ReactNode;
}) {
  const [view, setView] = useState<ViewType>(defaultView);
  const [offset, setOffset] = useState(0);
  const [filterValues, setFilterValues] = useState<Record<string, string>>({});
  const board = view === "kanban";
  const { state, reload } = useAsync(
    () => load(board ? BOARD_LIMIT : PAGE_SIZE, board ? 0 : offset, filterValues),
    [board, offset, JSON.stringify(filterValues)],
  );
  const filtered = Object.values(filterValues).some((v) => v !== "");

  return (
    <div className="space-y-6">
      <PageHeader
        title={title}
        description={state.status === "ready" ? `${state.data.total} ${state.data.total === 1 ? entityLabel.toLowerCase() : entityLabelPlural.toLowerCase()}` : undefined}
        actions={
          <Link href={newHref} className={buttonVariants()} data-testid="new-record">
            <Plus />
            New {entityLabel.toLowerCase()}
          </Link>
        }
      />
      {views.length > 1 || filters.length > 0 ? (
        <div className="flex flex-wrap items-center justify-between gap-3">
          {views.length > 1 ? (
            <div className="bg-muted text-muted-foreground inline-flex h-9 items-center rounded-lg p-[3px]" role="tablist">
              {views.map((v) => (
                <button
                  key={v}
                  type="button"
                  role="tab"
                  aria-selected={view === v}
                  data-testid={`view-toggle-${v}`}
                  data-active={view === v ? "true" : "false"}
                  onClick={() => setView(v)}
                  className={cn(
                    "inline-flex h-full items-center gap-1.5 rounded-md px-3 text-sm font-medium transition-colors",
                    view === v ? "bg-background text-foreground shadow-sm" : "hover:text-foreground",
                  )}
                >
                  {v === "table" ? <Rows3 className="size-4" /> : <Columns3 className="size-4" />}
                  {v === "table" ? "Table" : "Kanban"}
                </button>
              ))}
            </div>
          ) : (
            <span />
          )}
          {filters.length > 0 ? (
            <div className="flex flex-wrap items-center gap-2" data-testid="filter-bar">
              {filters.map((f) => (
                <div key={f.name} className="w-40">
                  {f.enumValues ? (
                    <Select
                      aria-label={f.label}
                      data-testid={`filter-${f.name}`}
                      value={filterValues[f.name] ?? ""}
                      onChange={(e) => {
                        setOffset(0);
                        setFilterValues((v) => ({ ...v, [f.name]: e.target.value }));
                      }}
                    >
                      <option value="">Any {f.label.toLowerCase()}</option>
                      {f.enumValues.map((v) => (
                        <option key={String(v)} value={String(v)}>
                          {humanize(v)}
                        </option>
                      ))}
                    </Select>
                  ) : (
                    <input
                      aria-label={f.label}
                      data-testid={`filter-${f.name}`}
                      placeholder={f.label}
                      className="border-input h-9 w-full rounded-md border bg-transparent px-3 text-sm shadow-xs outline-none focus-visible:ring-[3px] focus-visible:ring-ring/50"
                      value={filterValues[f.name] ?? ""}
                      onChange={(e) => {
                        setOffset(0);
                        setFilterValues((v) => ({ ...v, [f.name]: e.target.value }));
                      }}
                    />
                  )}
                </div>
              ))}
            </div>
          ) : null}
        </div>
      ) : null}
      {state.status === "loading" ? (
        <LoadingState />
      ) : state.status === "error" ? (
        <ErrorState error={state.error} onRetry={reload} />
      ) : state.data.items.length === 0 ? (
        <EmptyState
          title={filtered ? `No ${entityLabelPlural.toLowerCase()} match the filters` : `No ${entityLabelPlural.toLowerCase()} yet`}
          description={filtered ? "Change or clear the filters." : `Create the first ${entityLabel.toLowerCase()} to see it here.`}
          action={
            filtered ? undefined : (
              <Link href={newHref} className={buttonVariants({ size: "sm" })}>
                <Plus />
                New {entityLabel.toLowerCase()}
              </Link>
            )
          }
        />
      ) : board && renderKanban ? (
        renderKanban(state.data.items)
      ) : renderTable ? (
        <div className="space-y-3">
          {renderTable(state.data.items)}
          {state.data.total > PAGE_SIZE ? (
            <div className="text-muted-foreground flex items-center justify-between text-sm">
              <span>
                {offset + 1}–{offset + state.data.items.length} of {state.data.total}
              </span>
              <div className="flex gap-2">
                <Button variant="outline" size="sm" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
                  <ChevronLeft />
                  Previous
                </Button>
                <Button
                  variant="outline"
                  size="sm"
                  disabled={offset + PAGE_SIZE >= state.data.total}
                  onClick={() => setOffset(offset + PAGE_SIZE)}
                >
                  Next
                  <ChevronRight />
                </Button>
              </div>
            </div>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

export { ListView };
