import type * as React from "react";

import { cx } from "@/lib/cx";

/** A native checkbox in the shadcn look: keyboard, forms and tests work without a script. */
function Checkbox({ className, ...props }: Omit<React.ComponentProps<"input">, "type">) {
  return (
    <input
      type="checkbox"
      data-slot="checkbox"
      className={cx(
        "peer border-input size-4 shrink-0 rounded-[4px] border shadow-xs accent-primary transition-shadow outline-none focus-visible:border-ring focus-visible:ring-ring focus-visible:ring-[3px] aria-invalid:ring-destructive aria-invalid:border-destructive disabled:cursor-not-allowed disabled:opacity-50",
        className,
      )}
      {...props}
    />
  );
}

export { Checkbox };
