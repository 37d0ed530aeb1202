"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { type ComponentProps, type ReactNode, useEffect, useRef, useState } from "react";

import { announceNext, onBusy, takeAnnouncement } from "@/lib/announce";
import { filterParams } from "@/lib/filters";
import type { FieldSpec } from "@/lib/schema";

export type ViewType = "table" | "kanban";

/** What the server renders for the islands: icons and control classes, so none of that code ships. */
export interface ListLook {
  input: string;
  select: string;
  ghost: string;
  search: ReactNode;
  clear: ReactNode;
  table: ReactNode;
  kanban: ReactNode;
  chevron: ReactNode;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/**
 * The bound of a date-time range for the day `day` (YYYY-MM-DD) in the browser's zone: its first
 * or its last millisecond, as an ISO instant with the zone's offset (the day stays readable).
 */
function dayBound(day: string, end: boolean): string {
  const [y, m, d] = day.split("-").map(Number);
  if (!y || !m || !d) return "";
  const t = end ? new Date(y, m - 1, d, 23, 59, 59, 999) : new Date(y, m - 1, d);
  const offset = -t.getTimezoneOffset();
  const abs = Math.abs(offset);
  const zone = `${offset >= 0 ? "+" : "-"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return `${y}-${pad(m)}-${pad(d)}T${end ? "23:59:59.999" : "00:00:00"}${zone}`;
}

/** A native select in the look of the app's Select (its chevron comes from the server). */
function NativeSelect({ look, children, ...props }: { look: ListLook } & ComponentProps<"select">) {
  return (
    <div className="relative w-full">
      <select {...props} className={look.select}>
        {children}
      </select>
      {look.chevron}
    </div>
  );
}

/** The last address written, until the router shows it (two quick changes must not lose the first). */
let written: { path: string; query: string; at: number } | null = null;

/** Writes choices into the URL; anything but paging itself goes back to the first page. */
function useUpdate() {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  // The router has shown an address (ours, or one from back/forward): build on it from now on.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the address changes
  useEffect(() => {
    written = null;
  }, [params]);
  return (changes: Record<string, string>, announce = "", replace = false) => {
    const pending = written && written.path === pathname && written.query !== params.toString() && Date.now() - written.at < 5000;
    const next = new URLSearchParams(pending && written ? written.query : params);
    for (const [name, value] of Object.entries(changes)) {
      if (value === "") next.delete(name);
      else next.set(name, value);
    }
    if (!("page" in changes)) next.delete("page");
    announceNext(announce);
    written = { path: pathname, query: next.toString(), at: Date.now() };
    const url = next.size > 0 ? `${pathname}?${next}` : pathname;
    if (replace) router.replace(url, { scroll: false });
    else router.push(url, { scroll: false });
  };
}

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
  return <input {...props} value={text} onChange={(e) => setText(e.target.value)} />;
}

/**
 * The list's filter bar: the search box (`q`, debounced), one control per declared filter, "Clear
 * filters" and the Table/Kanban toggle. Everything lands in the URL; the server renders the rows.
 */
export function ListControls({
  entityLabelPlural,
  filters,
  choices,
  views,
  view,
  defaultView,
  look,
}: {
  look: ListLook;
  entityLabelPlural: string;
  filters: readonly FieldSpec[];
  /** Choices of the select filters (enum, boolean, reference) by field, labelled on the server. */
  choices: Readonly<Record<string, readonly { value: string; label: string }[]>>;
  views: readonly ViewType[];
  view: ViewType;
  defaultView: ViewType;
}) {
  const params = useSearchParams();
  const update = useUpdate();
  const get = (name: string) => params.get(name) ?? "";
  const keys = filters.flatMap((f) => filterParams(f));
  const filtered = get("q") !== "" || keys.some((k) => get(k) !== "");
  const clear = () => {
    const changes: Record<string, string> = { q: "" };
    for (const k of keys) changes[k] = "";
    update(changes, "Filters cleared. ");
  };
  return (
    <div className="flex flex-wrap items-center gap-3" data-testid="filter-bar">
      <div className="relative w-full sm:w-64">
        {look.search}
        <DebouncedInput
          type="search"
          aria-label={`Search ${entityLabelPlural.toLowerCase()}`}
          placeholder="Search…"
          className={`${look.input} pl-9`}
          data-testid="search"
          value={get("q")}
          onCommit={(v) => update({ q: v }, "", true)}
        />
      </div>
      {filters.map((f) => {
        const common = { "aria-label": f.label, "data-testid": `filter-${f.name}` };
        const set = (v: string) => update({ [f.name]: v }, v ? `${f.label}: ${v}. ` : "");
        const value = get(f.name);
        const options = choices[f.name];
        return (
          <div key={f.name} className={f.type === "date" || f.type === "datetime" ? "w-full sm:w-auto" : "w-full sm:w-44"}>
            {options ? (
              <NativeSelect {...common} look={look} value={value} onChange={(e) => set(e.target.value)}>
                <option value="">Any {f.label.toLowerCase()}</option>
                {options.map((c) => (
                  <option key={c.value} value={c.value}>
                    {c.label}
                  </option>
                ))}
              </NativeSelect>
            ) : f.type === "date" || f.type === "datetime" ? (
              // An inclusive range; a date-time range runs from the first to the last moment of
              // the chosen days in the browser's zone. Date inputs show no placeholder, so the
              // field's name stays visible beside them.
              <fieldset className="m-0 flex min-w-0 flex-wrap items-center gap-2 border-0 p-0">
                <legend className="sr-only">{f.label}</legend>
                <span className="text-muted-foreground text-sm whitespace-nowrap" aria-hidden="true">
                  {f.label}
                </span>
                {(["from", "to"] as const).map((end) => {
                  const name = `${f.name}_${end}`;
                  return (
                    <div key={end} className="min-w-36 flex-1">
                      <input
                        aria-label={`${f.label} ${end}`}
                        data-testid={`filter-${f.name}-${end}`}
                        className={look.input}
                        type="date"
                        value={get(name).slice(0, 10)}
                        onChange={(e) => {
                          const day = e.target.value;
                          const v = day && f.type === "datetime" ? dayBound(day, end === "to") : day;
                          update({ [name]: v }, day ? `${f.label} ${end} ${day}. ` : "");
                        }}
                      />
                    </div>
                  );
                })}
              </fieldset>
            ) : (
              <DebouncedInput
                {...common}
                className={look.input}
                placeholder={f.label}
                value={value}
                onCommit={(v) => update({ [f.name]: v }, "", true)}
              />
            )}
          </div>
        );
      })}
      {filtered ? (
        <button type="button" className={look.ghost} onClick={clear} data-testid="clear-filters">
          {look.clear}
          Clear filters
        </button>
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
              className={`inline-flex h-full items-center gap-1.5 rounded-md px-3 text-sm font-medium transition-colors [&_svg]:size-4 ${
                view === v ? "bg-background text-foreground shadow-sm" : "hover:text-foreground"
              }`}
            >
              {v === "table" ? look.table : look.kanban}
              {v === "table" ? "Table" : "Kanban"}
            </button>
          ))}
        </fieldset>
      ) : null}
    </div>
  );
}

/** Rows per page: a select bound to `size`. */
export function PageSize({
  size,
  sizes,
  defaultSize,
  look,
}: {
  size: number;
  sizes: readonly number[];
  defaultSize: number;
  look: ListLook;
}) {
  const update = useUpdate();
  return (
    <NativeSelect
      look={look}
      id="page-size"
      value={String(size)}
      data-testid="page-size"
      onChange={(e) => update({ size: e.target.value === String(defaultSize) ? "" : e.target.value }, `${e.target.value} rows per page. `)}
    >
      {sizes.map((n) => (
        <option key={n} value={n}>
          {n}
        </option>
      ))}
    </NativeSelect>
  );
}

/**
 * The polite status line: after paging, sorting, searching or filtering it says what changed and
 * what is shown now, once the new page has arrived from the server (a new `summary` or `stamp`).
 */
export function ListStatus({ summary, stamp }: { summary: string; stamp: string }) {
  const [said, setSaid] = useState("");
  // biome-ignore lint/correctness/useExhaustiveDependencies: announce on arrival of a new page
  useEffect(() => {
    setSaid(`${takeAnnouncement()}${summary}`);
  }, [summary, stamp]);
  return (
    <p role="status" className="sr-only" data-testid="list-status">
      {said}
    </p>
  );
}

/** The list's rows (rendered on the server), marked aria-busy while the next page is on its way. */
export function ListBusy({ children }: { children: ReactNode }) {
  const [busy, setBusy] = useState(false);
  useEffect(() => onBusy(setBusy), []);
  return (
    <div className="space-y-3" aria-busy={busy} data-busy={busy ? "true" : "false"}>
      {children}
    </div>
  );
}
