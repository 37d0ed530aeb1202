import { FieldValue } from "@/components/field-value";
import { ArrowDown, ArrowUp, ChevronsUpDown } from "@/components/icons";
import { Link } from "@/components/link";
import type { Sorting } from "@/components/list-view";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { type ApiRecord, type FieldSpec, readField } from "@/lib/schema";

/** Columns the API can sort by: scalar values, not references (their ids sort meaninglessly). */
function sortable(field: FieldSpec): boolean {
  return !field.reference && field.type !== "array" && field.type !== "object";
}

/**
 * The table view, rendered on the server: one column per declared field; the first cell links to
 * the record. Sortable column headers are links to the other order and carry `aria-sort`; the
 * table scrolls inside its own region on narrow screens, so the page itself never scrolls sideways.
 */
function RecordTable<T extends ApiRecord>({
  rows,
  columns,
  labels,
  zone,
  href,
  sorting,
  caption,
  testId,
}: {
  rows: readonly T[];
  columns: readonly FieldSpec[];
  labels: Readonly<Record<string, Readonly<Record<string, string>>>>;
  zone: string;
  href: (row: T) => string;
  sorting: Sorting;
  caption: string;
  testId: string;
}) {
  const desc = sorting.sort.startsWith("-");
  const sortedBy = desc ? sorting.sort.slice(1) : sorting.sort;
  return (
    <div className="bg-card rounded-xl border px-2 shadow-sm">
      <Table data-testid={testId} aria-label={caption}>
        <TableHeader>
          <TableRow>
            {columns.map((c) => {
              const active = sortedBy === c.name;
              const next = active && !desc ? `-${c.name}` : c.name;
              return (
                <TableHead key={c.name} aria-sort={active ? (desc ? "descending" : "ascending") : sortable(c) ? "none" : undefined}>
                  {sortable(c) ? (
                    <Link
                      href={sorting.href(next)}
                      scroll={false}
                      announce={`Sorted by ${c.label}, ${next.startsWith("-") ? "descending" : "ascending"}. `}
                      data-testid={`sort-${c.name}`}
                      className="hover:text-foreground -mx-2 inline-flex h-8 items-center gap-1 rounded-md px-2 font-medium [&_svg]:size-3.5"
                    >
                      {c.label}
                      {active ? desc ? <ArrowDown /> : <ArrowUp /> : <ChevronsUpDown className="opacity-50" />}
                    </Link>
                  ) : (
                    c.label
                  )}
                </TableHead>
              );
            })}
          </TableRow>
        </TableHeader>
        <TableBody>
          {rows.map((row) => (
            <TableRow key={row.id} data-testid={`row-${row.id}`}>
              {columns.map((c, i) => {
                const value = readField(row, c.name);
                return (
                  <TableCell key={c.name} data-column={c.name}>
                    {i === 0 ? (
                      <Link href={href(row)} className="inline-block py-0.5 font-medium underline-offset-4 hover:underline">
                        {value === null || value === undefined || value === "" ? (
                          row.id.slice(0, 8)
                        ) : (
                          <FieldValue field={c} value={value} labels={labels[c.name]} zone={zone} />
                        )}
                      </Link>
                    ) : (
                      <FieldValue field={c} value={value} labels={labels[c.name]} zone={zone} />
                    )}
                  </TableCell>
                );
              })}
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </div>
  );
}

export { RecordTable };
