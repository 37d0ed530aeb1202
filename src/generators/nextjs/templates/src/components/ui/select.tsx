import type * as React from "react";

import { ChevronDown } from "@/components/icons";
import { cx } from "@/lib/cx";

/** The select's look; the list's filter bar (a client island) gets it from the server as a string. */
export const selectClass = cx(
  "border-input dark:bg-input/30 h-9 w-full min-w-0 appearance-none rounded-md border bg-transparent py-1 pr-9 pl-3 text-base shadow-xs transition-[color,box-shadow] outline-none disabled:pointer-events-none disabled:cursor-not-allowed disabled:opacity-50 md:text-sm",
  "focus-visible:border-ring focus-visible:ring-ring focus-visible:ring-[3px]",
  "aria-invalid:ring-destructive aria-invalid:border-destructive",
);

/**
 * A native <select> styled like shadcn's select trigger (the new-york-v4 native-select). Native
 * keeps the bundle small, works with the keyboard and form autofill, and is easy to drive in tests.
 */
function Select({ className, children, ...props }: React.ComponentProps<"select">) {
  return (
    <div data-slot="select-wrapper" className="group/select relative w-full">
      <select data-slot="select" className={cx(selectClass, className)} {...props}>
        {children}
      </select>
      <ChevronDown
        aria-hidden="true"
        className="text-muted-foreground pointer-events-none absolute top-1/2 right-3 size-4 -translate-y-1/2 opacity-50"
      />
    </div>
  );
}

export { Select };
