"use client";

import { useEffect, useMemo, useState } from "react";

import type { ListResult } from "@/lib/api";
import { type ApiRecord, readField } from "@/lib/schema";

/** Where the options of a reference field come from: all records of the target entity. */
export interface ReferenceSource {
  /** Target entity name; fields pointing at the same entity share one request. */
  entity: string;
  /** Loads the target records (limit 1000, offset 0). */
  load: () => Promise<ListResult<ApiRecord>>;
  /** Field of the target shown instead of the id; the id when null or empty. */
  display: string | null;
}

export interface ReferenceOption {
  value: string;
  label: string;
}

export interface References {
  /** Reference key -> options, in the order the API returned them. */
  options: Record<string, ReferenceOption[]>;
  /** Reference key -> id -> label. */
  labels: Record<string, Record<string, string>>;
  loading: boolean;
  error: string | null;
}

function labelOf(record: ApiRecord, display: string | null): string {
  const value = display ? readField(record, display) : null;
  return value === null || value === undefined || value === "" ? record.id : String(value);
}

export function useReferences(sources: Readonly<Record<string, ReferenceSource>>): References {
  const keys = Object.keys(sources).sort().join(",");
  const [state, setState] = useState<References>({ options: {}, labels: {}, loading: keys !== "", error: null });
  // biome-ignore lint/correctness/useExhaustiveDependencies: sources are module constants; `keys` names them
  useEffect(() => {
    if (keys === "") return;
    let alive = true;
    const byEntity = new Map<string, Promise<ListResult<ApiRecord>>>();
    const entries = Object.entries(sources).map(([key, source]) => {
      let pending = byEntity.get(source.entity);
      if (!pending) {
        pending = source.load();
        byEntity.set(source.entity, pending);
      }
      return pending.then((page) => [key, page.items.map((r) => ({ value: r.id, label: labelOf(r, source.display) }))] as const);
    });
    Promise.all(entries).then(
      (pairs) => {
        if (!alive) return;
        const options: Record<string, ReferenceOption[]> = {};
        const labels: Record<string, Record<string, string>> = {};
        for (const [key, list] of pairs) {
          options[key] = list;
          labels[key] = Object.fromEntries(list.map((o) => [o.value, o.label]));
        }
        setState({ options, labels, loading: false, error: null });
      },
      (e: unknown) => {
        if (!alive) return;
        // Without labels the views fall back to showing the ids.
        const labels = Object.fromEntries(Object.keys(sources).map((key) => [key, {}]));
        setState({ options: {}, labels, loading: false, error: e instanceof Error ? e.message : String(e) });
      },
    );
    return () => {
      alive = false;
    };
  }, [keys]);
  return useMemo(() => state, [state]);
}
