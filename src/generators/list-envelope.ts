/**
 * The body of every list endpoint, as the generated API returns it (`page_body` in the FastAPI
 * templates' app/records.py). The backend's response model (`<Entity>List` in app/models/) and
 * the frontend's `ListResult` (src/lib/types.ts) are both written from this one description, so
 * a field the API may leave null is nullable on both sides.
 */
export interface EnvelopeField {
  name: string;
  /** `records`: the page's records, in the entity's response shape. */
  kind: "records" | "integer" | "string";
  nullable: boolean;
  description: string;
}

export const LIST_ENVELOPE: readonly EnvelopeField[] = [
  { name: "items", kind: "records", nullable: false, description: "The records of this page" },
  { name: "total", kind: "integer", nullable: true, description: "Records matching the filters; null when with_total=false" },
  {
    name: "next_cursor",
    kind: "string",
    nullable: true,
    description: "Cursor of the next page (the `after` parameter); null on the last page",
  },
];
