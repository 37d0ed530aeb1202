"use client";

import Link from "next/link";

import { FieldValue } from "@/components/field-value";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { type ApiRecord, type FieldSpec, valueOf } from "@/lib/schema";

/** The table view: one column per declared field; the first cell links to the record. */
function RecordTable<T extends ApiRecord>({
  rows,
  columns,
  labels,
  href,
  testId,
}: {
  rows: readonly T[];
  columns: readonly FieldSpec[];
  labels: Readonly<Record<string, Readonly<Record<string, string>>>>;
  href: (row: T) => string;
  testId: string;
}) {
  return (
    <div className="bg-card overflow-hidden rounded-xl border px-2 shadow-sm">
      <Table data-testid={testId}>
        <TableHeader>
          <TableRow>
            {columns.map((c) => (
              <TableHead key={c.name}>
                {c.label}
              </TableHead>
            ))}
          </TableRow>
        </TableHeader>
        <TableBody>
          {rows.map((row) => (
            <TableRow key={row.id} data-testid={`row-${row.id}`}>
              {columns.map((c, i) => {
                const value = valueOf(row, c.name);
                return (
                  <TableCell key={c.name} data-column={c.name}>
                    {i === 0 ? (
                      <Link href={href(row)} className="font-medium underline-offset-4 hover:underline">
                        {value === null || value === undefined || value === "" ? row.id.slice(0, 8) : <FieldValue field={c} value={value} labels={labels[c.name]} />}
                      </Link>
                    ) : (
                      <FieldValue field={c} value={value} labels={labels[c.name]} />
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
