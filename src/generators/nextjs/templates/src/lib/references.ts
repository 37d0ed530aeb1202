import { type ApiRecord, readField } from "@/lib/schema";
import type { ListResult } from "@/lib/types";

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
  error: string | null;
}

function labelOf(record: ApiRecord, display: string | null): string {
  const value = display ? readField(record, display) : null;
  return value === null || value === undefined || value === "" ? record.id : String(value);
}

/**
 * Loads the records of the reference fields `keys` (all of `sources` when omitted) on the server,
 * one request per target entity. When that fails the views show the ids instead of the labels.
 */
export async function loadReferences(
  sources: Readonly<Record<string, ReferenceSource>>,
  keys: readonly string[] = Object.keys(sources),
): Promise<References> {
  const byEntity = new Map<string, Promise<ListResult<ApiRecord>>>();
  const wanted = keys.filter((k) => sources[k]);
  try {
    const pairs = await Promise.all(
      wanted.map(async (key) => {
        const source = sources[key] as ReferenceSource;
        let pending = byEntity.get(source.entity);
        if (!pending) {
          pending = source.load();
          byEntity.set(source.entity, pending);
        }
        const page = await pending;
        return [key, page.items.map((r) => ({ value: r.id, label: labelOf(r, source.display) }))] as const;
      }),
    );
    const options: Record<string, ReferenceOption[]> = {};
    const labels: Record<string, Record<string, string>> = {};
    for (const [key, list] of pairs) {
      options[key] = list;
      labels[key] = Object.fromEntries(list.map((o) => [o.value, o.label]));
    }
    return { options, labels, error: null };
  } catch (e) {
    const labels = Object.fromEntries(wanted.map((key) => [key, {}]));
    return { options: {}, labels, error: e instanceof Error ? e.message : String(e) };
  }
}
