"use client";

import { type ComponentProps, useEffect, useState } from "react";

import type { FormIsland as Island } from "@/components/form-island";

let loaded: typeof Island | null = null;

/**
 * Loads the edit form's island: it is no part of the detail page's first load; the detail page
 * calls this once it has hydrated, so the code is there before anyone presses Edit.
 */
export function loadFormIsland(): Promise<typeof Island> {
  return import("@/components/form-island").then((m) => {
    loaded = m.FormIsland;
    return m.FormIsland;
  });
}

/** FormIsland, loaded on first use (at once when it has arrived; the form appears once it can be sent). */
export function LazyFormIsland(props: ComponentProps<typeof Island>) {
  const [FormIsland, setFormIsland] = useState(() => loaded);
  useEffect(() => {
    if (!FormIsland) void loadFormIsland().then((c) => setFormIsland(() => c));
  }, [FormIsland]);
  return FormIsland ? (
    <FormIsland {...props} />
  ) : (
    <p role="status" className="text-muted-foreground py-14 text-center text-sm">
      Loading…
    </p>
  );
}
