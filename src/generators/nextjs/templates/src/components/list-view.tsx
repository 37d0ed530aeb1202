import type { ReactNode } from "react";

import { ChevronDown, ChevronLeft, ChevronRight, Columns3, Plus, Rows3, Search, X } from "@/components/icons";
import { Link } from "@/components/link";
import { ListBusy, ListControls, type ListLook, ListStatus, PageSize, type ViewType } from "@/components/list-controls";
import { PageHeader } from "@/components/page-header";
import { EmptyState, ErrorState } from "@/components/page-state";
import { buttonVariants } from "@/components/ui/button";
import { inputClass } from "@/components/ui/input";
import { selectClass } from "@/components/ui/select";
import { humanize } from "@/lib/display";
import { filterParams } from "@/lib/filters";
import { loadReferences, type ReferenceSource } from "@/lib/references";
import { type ListFilters, toApiError } from "@/lib/request";
import type { ApiRecord, FieldSpec } from "@/lib/schema";
import { requestZone } from "@/lib/server-context";
import type { ListResult } from "@/lib/types";

export type { ViewType } from "@/components/list-controls";

/** What a table needs to sort: the URL's `sort` (`field` or `-field`) and the address of each order. */
export interface Sorting {
  sort: string;
  href: (sort: string) => string;
}

/** What a view needs besides its rows: the reference labels and the zone date-times are shown in. */
export interface ViewContext {
  labels: Readonly<Record<string, Readonly<Record<string, string>>>>;
  zone: string;
}

export type SearchParams = Record<string, string | string[] | undefined>;

/** The filter bar's controls as the server renders them (the islands get classes and icons, not code). */
const look: ListLook = {
  input: inputClass,
  select: selectClass,
  ghost: buttonVariants({ variant: "ghost" }),
  search: <Search className="text-muted-foreground pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2" />,
  clear: <X />,
  table: <Rows3 />,
  kanban: <Columns3 />,
  chevron: (
    <ChevronDown
      aria-hidden="true"
      className="text-muted-foreground pointer-events-none absolute top-1/2 right-3 size-4 -translate-y-1/2 opacity-50"
    />
  ),
};

const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_SIZE = 25;
/** The board shows every matching record at once, up to the API's largest page. */
const BOARD_LIMIT = 1000;
/** Search params the list owns; every other param of the page is a filter named like its field. */
const OWN = ["view", "page", "size", "sort", "q"];

/**
 * A list page, rendered on the server: header, the filter bar (a client island), the declared
 * view, paging, and the empty and error states. Everything the user chose lives in the URL's
 * search params, so reload, back and a shared link restore it; the API does the searching,
 * filtering, sorting and paging (`q`, `field=value`, `sort`, `limit`/`offset`). Sorting and paging
 * are links; the status line announces each change.
 */
export async function ListView<T extends ApiRecord>({
  title,
  route,
  entityLabel,
  entityLabelPlural,
  newHref,
  views,
  defaultView,
  filters,
  references,
  columnReferences,
  searchParams,
  load,
  renderTable,
  renderKanban,
}: {
  title: string;
  route: string;
  entityLabel: string;
  entityLabelPlural: string;
  newHref: string;
  views: readonly ViewType[];
  defaultView: ViewType;
  filters: readonly FieldSpec[];
  references: Readonly<Record<string, ReferenceSource>>;
  /** Reference fields the views show (their labels are loaded with the rows). */
  columnReferences: readonly string[];
  searchParams: SearchParams;
  load: (limit: number, offset: number, query: ListFilters) => Promise<ListResult<T>>;
  renderTable?: (rows: readonly T[], sorting: Sorting, context: ViewContext) => ReactNode;
  renderKanban?: (rows: readonly T[], context: ViewContext) => ReactNode;
}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(searchParams)) {
    const v = Array.isArray(value) ? value[0] : value;
    if (v !== undefined && v !== "") params.set(name, v);
  }
  const get = (name: string) => params.get(name) ?? "";
  const requested = get("view") as ViewType;
  const view = views.includes(requested) ? requested : defaultView;
  const board = view === "kanban";
  const size = PAGE_SIZES.includes(Number(get("size"))) ? Number(get("size")) : DEFAULT_SIZE;
  const page = Math.max(1, Math.floor(Number(get("page"))) || 1);
  const sort = get("sort");
  const q = get("q");
  const query: ListFilters = { q, sort };
  const filterKeys = filters.flatMap((f) => filterParams(f)).filter((k) => !OWN.includes(k));
  for (const k of filterKeys) query[k] = get(k);
  const filtered = q !== "" || filterKeys.some((k) => get(k) !== "");
  const offset = board ? 0 : (page - 1) * size;
  /** The address of this list with `changes` applied; anything but paging goes back to page 1. */
  const href = (changes: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(changes)) {
      if (value === "") next.delete(name);
      else next.set(name, value);
    }
    if (!("page" in changes)) next.delete("page");
    return next.size > 0 ? `${route}?${next}` : route;
  };
  const filterRefs = filters.flatMap((f) => (f.reference ? [f.reference] : []));
  const [result, refs, zone] = await Promise.all([
    load(board ? BOARD_LIMIT : size, offset, query).then(
      (data) => ({ ok: true as const, data }),
      (e: unknown) => ({ ok: false as const, error: toApiError(e) }),
    ),
    loadReferences(references, [...new Set([...columnReferences, ...filterRefs])]),
    requestZone(),
  ]);

  // The choices of the select filters (enum, boolean, reference), labelled here on the server.
  const choices: Record<string, readonly { value: string; label: string }[]> = {};
  for (const f of filters) {
    if (f.enumValues) choices[f.name] = f.enumValues.map((v) => ({ value: String(v), label: humanize(v) }));
    else if (f.type === "boolean")
      choices[f.name] = [
        { value: "true", label: "Yes" },
        { value: "false", label: "No" },
      ];
    else if (f.reference) choices[f.name] = refs.options[f.reference] ?? [];
  }
  const controls = (
    <ListControls
      look={look}
      entityLabelPlural={entityLabelPlural}
      filters={filters}
      choices={choices}
      views={views}
      view={view}
      defaultView={defaultView}
    />
  );
  if (!result.ok) {
    return (
      <div className="space-y-6">
        <PageHeader title={title} />
        {controls}
        <ErrorState error={result.error} retry={href({ page: get("page") })} />
      </div>
    );
  }
  const { items } = result.data;
  // The API answers a null total only when a caller asks it not to count (with_total=false); this
  // view never does, but should one arrive, what the page shows is what is known.
  const total = result.data.total ?? offset + items.length;
  const noun = total === 1 ? entityLabel.toLowerCase() : entityLabelPlural.toLowerCase();
  const range = board || total === 0 ? "" : ` Showing ${offset + 1} to ${offset + items.length}.`;
  const pages = Math.max(1, Math.ceil(total / size));
  const cleared: Record<string, string> = { q: "" };
  for (const k of filterKeys) cleared[k] = "";
  const context: ViewContext = { labels: refs.labels, zone };
  const pageLink = (n: number) => href({ page: n <= 1 ? "" : String(n) });

  return (
    <div className="space-y-6">
      <PageHeader
        title={title}
        description={`${total} ${noun}`}
        actions={
          <Link href={newHref} className={buttonVariants()} data-testid="new-record">
            <Plus />
            New {entityLabel.toLowerCase()}
          </Link>
        }
      />
      {controls}
      <ListStatus summary={`${total} ${noun}.${range}`} stamp={params.toString()} />
      {items.length === 0 ? (
        <EmptyState
          title={filtered ? `No ${entityLabelPlural.toLowerCase()} match` : `No ${entityLabelPlural.toLowerCase()} yet`}
          description={
            filtered ? "Change the search or the filters, or clear them." : `Create the first ${entityLabel.toLowerCase()} to see it here.`
          }
          action={
            filtered ? (
              <Link
                href={href(cleared)}
                announce="Filters cleared. "
                className={buttonVariants({ size: "sm", variant: "outline" })}
                data-testid="empty-clear-filters"
              >
                Clear filters
              </Link>
            ) : (
              <Link href={newHref} className={buttonVariants({ size: "sm" })}>
                <Plus />
                New {entityLabel.toLowerCase()}
              </Link>
            )
          }
        />
      ) : (
        <ListBusy>
          {board && renderKanban
            ? renderKanban(items, context)
            : renderTable
              ? renderTable(items, { sort, href: (s) => href({ sort: s }) }, context)
              : null}
          {board ? null : (
            <nav aria-label="Pagination" className="text-muted-foreground flex flex-wrap items-center justify-between gap-3 text-sm">
              <span data-testid="page-range">
                {offset + 1}–{offset + items.length} of {total}
              </span>
              <div className="flex flex-wrap items-center gap-2">
                <label htmlFor="page-size" className="flex items-center gap-2">
                  Rows per page
                </label>
                <div className="w-20">
                  <PageSize size={size} sizes={PAGE_SIZES} defaultSize={DEFAULT_SIZE} look={look} />
                </div>
                {/* aria-disabled links stay focusable, so the keyboard focus stays where it was. */}
                <Link
                  href={pageLink(page - 1)}
                  scroll={false}
                  announce={`Page ${page - 1} of ${pages}. `}
                  aria-disabled={page <= 1}
                  className={buttonVariants({ variant: "outline", size: "sm" })}
                  data-testid="page-prev"
                >
                  <ChevronLeft />
                  Previous
                </Link>
                <Link
                  href={pageLink(page + 1)}
                  scroll={false}
                  announce={`Page ${page + 1} of ${pages}. `}
                  aria-disabled={page >= pages}
                  className={buttonVariants({ variant: "outline", size: "sm" })}
                  data-testid="page-next"
                >
                  Next
                  <ChevronRight />
                </Link>
              </div>
            </nav>
          )}
        </ListBusy>
      )}
    </div>
  );
}
