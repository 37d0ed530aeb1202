"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { type ComponentProps, type ReactNode, useEffect, useRef, useState } from "react";

import { ChevronLeft, ChevronRight, Columns3, Plus, Rows3, Search, X } from "@/components/icons";
import { Link } from "@/components/link";
import { PageHeader } from "@/components/page-header";
import { EmptyState, ErrorState, LoadingState } from "@/components/page-state";
import { Button, buttonVariants } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Select } from "@/components/ui/select";
import { useAsync } from "@/hooks/use-async";
import { type ReferenceSource, useReferences } from "@/hooks/use-references";
import type { ListFilters, ListResult } from "@/lib/api";
import { humanize } from "@/lib/display";
import type { ApiRecord, FieldSpec } from "@/lib/schema";
import { cn } from "@/lib/utils";

export type ViewType = "table" | "kanban";

/** What a table needs to sort: the URL's `sort` (`field` or `-field`) and a way to change it. */
export interface Sorting {
  sort: string;
  onSort: (field: string, label: string) => void;
}

const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_SIZE = 25;
/** The board shows every matching record at once, up to the API's largest page. */
const BOARD_LIMIT = 1000;
/** Search params the list owns; every other param of the page is a filter named like its field. */
const OWN = ["view", "page", "size", "sort", "q"];

/** A text box that reports its value after typing pauses (search and free-text filters). */
function DebouncedInput({
  value,
  onCommit,
  ...props
}: { value: string; onCommit: (value: string) => void } & Omit<ComponentProps<"input">, "value">) {
  const [text, setText] = useState(value);
  const sent = useRef(value);
  // A value from the URL (back, a shared link) replaces what is typed, unless it is our own echo.
  useEffect(() => {
    if (value !== sent.current) setText(value);
    sent.current = value;
  }, [value]);
  useEffect(() => {
    if (text === sent.current) return;
    const timer = setTimeout(() => {
      sent.current = text;
      onCommit(text);
    }, 300);
    return () => clearTimeout(timer);
  }, [text, onCommit]);
  return <Input {...props} value={text} onChange={(e) => setText(e.target.value)} />;
}

/**
 * A list page: header, search, filters, the declared views (with a Table/Kanban toggle when both
 * are declared), paging, and the loading, empty and error states. Everything the user chose lives
 * in the URL's search params, so reload, back and a shared link restore it; the API does the
 * searching, filtering, sorting and paging (`q`, `field=value`, `sort`, `limit`/`offset`).
 */
function ListView<T extends ApiRecord>({
  title,
  entityLabel,
  entityLabelPlural,
  newHref,
  views,
  defaultView,
  filters,
  references,
  load,
  renderTable,
  renderKanban,
  preloadKanban,
}: {
  title: string;
  entityLabel: string;
  entityLabelPlural: string;
  newHref: string;
  views: readonly ViewType[];
  defaultView: ViewType;
  filters: readonly FieldSpec[];
  references: Readonly<Record<string, ReferenceSource>>;
  load: (limit: number, offset: number, query: ListFilters) => Promise<ListResult<T>>;
  renderTable?: (rows: readonly T[], sorting: Sorting) => ReactNode;
  renderKanban?: (rows: readonly T[]) => ReactNode;
  /** Starts loading the board's code; called as soon as the board view is chosen, so the code arrives with the data, not after it. */
  preloadKanban?: () => unknown;
}) {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const refs = useReferences(references);
  const get = (name: string) => params.get(name) ?? "";
  const requested = get("view") as ViewType;
  const view = views.includes(requested) ? requested : defaultView;
  const board = view === "kanban";
  const size = PAGE_SIZES.includes(Number(get("size"))) ? Number(get("size")) : DEFAULT_SIZE;
  const page = Math.max(1, Math.floor(Number(get("page"))) || 1);
  const sort = get("sort");
  const q = get("q");
  const query: ListFilters = { q, sort };
  for (const f of filters) if (!OWN.includes(f.name)) query[f.name] = get(f.name);
  const filtered = q !== "" || filters.some((f) => get(f.name) !== "");
  const offset = board ? 0 : (page - 1) * size;
  const key = params.toString();
  const { state, busy, reload } = useAsync(() => load(board ? BOARD_LIMIT : size, offset, query), [key, board]);
  useEffect(() => {
    if (board) preloadKanban?.();
  }, [board, preloadKanban]);
  const [said, setSaid] = useState("");
  const pending = useRef("");

  /** Writes choices into the URL; anything but paging itself goes back to the first page. */
  const update = (changes: Record<string, string>, announce = "", replace = false) => {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(changes)) {
      if (value === "") next.delete(name);
      else next.set(name, value);
    }
    if (!("page" in changes)) next.delete("page");
    pending.current = announce;
    const url = next.size > 0 ? `${pathname}?${next}` : pathname;
    if (replace) router.replace(url, { scroll: false });
    else router.push(url, { scroll: false });
  };

  const total = state.status === "ready" ? state.data.total : 0;
  const shown = state.status === "ready" ? state.data.items.length : 0;
  const noun = total === 1 ? entityLabel.toLowerCase() : entityLabelPlural.toLowerCase();
  // After paging, sorting, searching or filtering, the polite status line says what changed, once
  // the new page has arrived (a new `state`, then `busy` off).
  // biome-ignore lint/correctness/useExhaustiveDependencies: announce on arrival, not on every input change
  useEffect(() => {
    if (busy || state.status !== "ready") return;
    const range = board || total === 0 ? "" : ` Showing ${offset + 1} to ${offset + shown}.`;
    setSaid(`${pending.current}${total} ${noun}.${range}`);
    pending.current = "";
  }, [busy, state]);

  const pages = Math.max(1, Math.ceil(total / size));
  const goTo = (n: number) => {
    if (n < 1 || n > pages || n === page) return;
    update({ page: n === 1 ? "" : String(n) }, `Page ${n} of ${pages}. `);
  };
  const clear = () => {
    const changes: Record<string, string> = { q: "" };
    for (const f of filters) changes[f.name] = "";
    update(changes, "Filters cleared. ");
  };

  return (
    <div className="space-y-6">
      <PageHeader
        title={title}
        description={state.status === "ready" ? `${total} ${noun}` : undefined}
        actions={
          <Link href={newHref} className={buttonVariants()} data-testid="new-record">
            <Plus />
            New {entityLabel.toLowerCase()}
          </Link>
        }
      />
      <div className="flex flex-wrap items-center gap-3" data-testid="filter-bar">
        <div className="relative w-full sm:w-64">
          <Search className="text-muted-foreground pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2" />
          <DebouncedInput
            type="search"
            aria-label={`Search ${entityLabelPlural.toLowerCase()}`}
            placeholder="Search…"
            className="pl-9"
            data-testid="search"
            value={q}
            onCommit={(v) => update({ q: v }, "", true)}
          />
        </div>
        {filters.map((f) => {
          const common = { "aria-label": f.label, "data-testid": `filter-${f.name}` };
          const set = (v: string) => update({ [f.name]: v }, v ? `${f.label}: ${v}. ` : "");
          const value = get(f.name);
          let choices: { value: string; label: string }[] | null = null;
          if (f.enumValues) choices = f.enumValues.map((v) => ({ value: String(v), label: humanize(v) }));
          else if (f.type === "boolean")
            choices = [
              { value: "true", label: "Yes" },
              { value: "false", label: "No" },
            ];
          else if (f.reference) choices = refs.options[f.reference] ?? [];
          return (
            <div key={f.name} className={f.type === "date" ? "w-full sm:w-auto" : "w-full sm:w-44"}>
              {choices ? (
                <Select {...common} value={value} onChange={(e) => set(e.target.value)}>
                  <option value="">Any {f.label.toLowerCase()}</option>
                  {choices.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
                    </option>
                  ))}
                </Select>
              ) : f.type === "date" ? (
                // A date input shows no placeholder, so its name stays visible beside it.
                <div className="flex items-center gap-2">
                  <span className="text-muted-foreground text-sm whitespace-nowrap" aria-hidden="true">
                    {f.label}
                  </span>
                  <Input {...common} type="date" value={value} onChange={(e) => set(e.target.value)} />
                </div>
              ) : (
                <DebouncedInput {...common} placeholder={f.label} value={value} onCommit={(v) => update({ [f.name]: v }, "", true)} />
              )}
            </div>
          );
        })}
        {filtered ? (
          <Button variant="ghost" onClick={clear} data-testid="clear-filters">
            <X />
            Clear filters
          </Button>
        ) : null}
        {views.length > 1 ? (
          <fieldset className="bg-muted text-muted-foreground inline-flex h-10 items-center rounded-lg border-0 p-1 sm:ml-auto">
            <legend className="sr-only">View</legend>
            {views.map((v) => (
              <button
                key={v}
                type="button"
                aria-pressed={view === v}
                data-testid={`view-toggle-${v}`}
                data-active={view === v ? "true" : "false"}
                onClick={() => update({ view: v === defaultView ? "" : v }, `${v === "table" ? "Table" : "Kanban"} view. `)}
                className={cn(
                  "inline-flex h-full items-center gap-1.5 rounded-md px-3 text-sm font-medium transition-colors [&_svg]:size-4",
                  view === v ? "bg-background text-foreground shadow-sm" : "hover:text-foreground",
                )}
              >
                {v === "table" ? <Rows3 /> : <Columns3 />}
                {v === "table" ? "Table" : "Kanban"}
              </button>
            ))}
          </fieldset>
        ) : null}
      </div>
      <p role="status" className="sr-only" data-testid="list-status">
        {said}
      </p>
      {state.status === "loading" ? (
        <LoadingState />
      ) : state.status === "error" ? (
        <ErrorState error={state.error} onRetry={reload} />
      ) : state.data.items.length === 0 ? (
        <EmptyState
          title={filtered ? `No ${entityLabelPlural.toLowerCase()} match` : `No ${entityLabelPlural.toLowerCase()} yet`}
          description={
            filtered ? "Change the search or the filters, or clear them." : `Create the first ${entityLabel.toLowerCase()} to see it here.`
          }
          action={
            filtered ? (
              <Button size="sm" variant="outline" onClick={clear} data-testid="empty-clear-filters">
                Clear filters
              </Button>
            ) : (
              <Link href={newHref} className={buttonVariants({ size: "sm" })}>
                <Plus />
                New {entityLabel.toLowerCase()}
              </Link>
            )
          }
        />
      ) : (
        <div className="space-y-3" aria-busy={busy} data-busy={busy ? "true" : "false"}>
          {board && renderKanban
            ? renderKanban(state.data.items)
            : renderTable
              ? renderTable(state.data.items, {
                  sort,
                  onSort: (field, label) => {
                    const next = sort === field ? `-${field}` : field;
                    update({ sort: next }, `Sorted by ${label}, ${next.startsWith("-") ? "descending" : "ascending"}. `);
                  },
                })
              : null}
          {board ? null : (
            <nav aria-label="Pagination" className="text-muted-foreground flex flex-wrap items-center justify-between gap-3 text-sm">
              <span data-testid="page-range">
                {offset + 1}–{offset + shown} of {total}
              </span>
              <div className="flex flex-wrap items-center gap-2">
                <label htmlFor="page-size" className="flex items-center gap-2">
                  Rows per page
                </label>
                <div className="w-20">
                  <Select
                    id="page-size"
                    value={String(size)}
                    data-testid="page-size"
                    onChange={(e) =>
                      update({ size: e.target.value === String(DEFAULT_SIZE) ? "" : e.target.value }, `${e.target.value} rows per page. `)
                    }
                  >
                    {PAGE_SIZES.map((n) => (
                      <option key={n} value={n}>
                        {n}
                      </option>
                    ))}
                  </Select>
                </div>
                {/* aria-disabled, not disabled: a disabled button would drop the keyboard focus. */}
                <Button variant="outline" size="sm" aria-disabled={page <= 1} onClick={() => goTo(page - 1)} data-testid="page-prev">
                  <ChevronLeft />
                  Previous
                </Button>
                <Button variant="outline" size="sm" aria-disabled={page >= pages} onClick={() => goTo(page + 1)} data-testid="page-next">
                  Next
                  <ChevronRight />
                </Button>
              </div>
            </nav>
          )}
        </div>
      )}
    </div>
  );
}

export { ListView };
