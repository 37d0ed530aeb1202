"use client";

import { type ReactNode, useEffect, useState } from "react";

/** Key of the stored choice; the root layout's inline script reads it before the first paint. */
const THEME_KEY = "charter.theme";

/** A toggle button (aria-pressed) between the light and the dark theme; the choice persists. */
export function ThemeToggle({ className, children }: { className: string; children: ReactNode }) {
  const [dark, setDark] = useState(false);
  useEffect(() => setDark(document.documentElement.classList.contains("dark")), []);
  return (
    <button
      type="button"
      aria-pressed={dark}
      data-testid="theme-toggle"
      className={`${className} aria-pressed:bg-sidebar-accent aria-pressed:text-sidebar-accent-foreground`}
      onClick={() => {
        const next = !document.documentElement.classList.contains("dark");
        document.documentElement.classList.toggle("dark", next);
        try {
          localStorage.setItem(THEME_KEY, next ? "dark" : "light");
        } catch {
          // Storage refused (private mode): the choice lasts for this page only.
        }
        setDark(next);
      }}
    >
      {children}
    </button>
  );
}
