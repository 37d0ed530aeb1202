"use client";

import { createContext } from "react";

/** Set by the detail page around its edit form: how the form says it is done (saved or cancelled). */
export const EditDone = createContext<((saved: boolean) => void) | null>(null);
