"use client";

import { useEffect, useState } from "react";

interface Toast {
  id: number;
  message: string;
}

let nextId = 1;
const listeners = new Set<(toast: Toast) => void>();

/** Tells the user what just happened ("Ticket “Printer on fire” saved"); any component may call it. */
export function notify(message: string): void {
  const toast = { id: nextId++, message };
  for (const listener of listeners) listener(toast);
}

/**
 * The polite live region toasts appear in. It is rendered once by the app shell and is present
 * from the first paint, so screen readers announce every message added to it.
 */
export function Toaster() {
  const [toasts, setToasts] = useState<readonly Toast[]>([]);
  useEffect(() => {
    const add = (toast: Toast) => {
      setToasts((list) => [...list, toast]);
      setTimeout(() => setToasts((list) => list.filter((t) => t.id !== toast.id)), 6000);
    };
    listeners.add(add);
    return () => {
      listeners.delete(add);
    };
  }, []);
  return (
    <div
      role="status"
      aria-live="polite"
      data-testid="toasts"
      className="pointer-events-none fixed right-4 bottom-4 z-50 flex w-80 max-w-[calc(100vw-2rem)] flex-col gap-2"
    >
      {toasts.map((t) => (
        <div key={t.id} data-testid="toast" className="bg-foreground text-background rounded-lg px-4 py-3 text-sm shadow-lg">
          {t.message}
        </div>
      ))}
    </div>
  );
}
