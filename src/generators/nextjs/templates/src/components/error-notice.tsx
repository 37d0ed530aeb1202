import type * as React from "react";

import { TriangleAlert } from "@/components/icons";
import { cx } from "@/lib/cx";

/** An inline error line (form and board messages), announced at once (role=alert). */
function ErrorNotice({ children, testId, className }: { children: React.ReactNode; testId?: string; className?: string }) {
  return (
    <div
      role="alert"
      data-testid={testId}
      className={cx(
        "border-destructive/30 bg-destructive/5 text-destructive flex items-start gap-2 rounded-lg border px-4 py-3 text-sm",
        className,
      )}
    >
      <TriangleAlert className="mt-0.5 size-4 shrink-0" />
      <div>{children}</div>
    </div>
  );
}

export { ErrorNotice };
