"use client";

import { usePathname } from "next/navigation";
import { type ReactNode, useEffect, useState } from "react";

import { useModal } from "@/hooks/use-modal";

/**
 * Below the `md` breakpoint: the top bar with the menu button, and the navigation (rendered on the
 * server, passed as children) in a modal drawer that keeps focus inside and closes on Escape, on
 * the close button, on a click outside and on navigation.
 */
export function Drawer({
  title,
  menuIcon,
  closeIcon,
  children,
}: {
  title: string;
  menuIcon: ReactNode;
  closeIcon: ReactNode;
  children: ReactNode;
}) {
  const pathname = usePathname();
  const [open, setOpen] = useState(false);
  const drawer = useModal(open);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new path means the user navigated
  useEffect(() => setOpen(false), [pathname]);
  return (
    <>
      <header className="bg-sidebar text-sidebar-foreground sticky top-0 z-30 flex h-14 items-center gap-2 border-b px-3 md:hidden">
        <button
          type="button"
          aria-expanded={open}
          aria-controls="nav-drawer"
          aria-label="Open navigation"
          data-testid="menu-button"
          onClick={() => setOpen(true)}
          className="hover:bg-sidebar-accent flex size-10 items-center justify-center rounded-md [&_svg]:size-5"
        >
          {menuIcon}
        </button>
        <span className="text-sm font-semibold">{title}</span>
      </header>
      <dialog
        id="nav-drawer"
        ref={drawer.ref}
        aria-label="Navigation"
        data-testid="nav-drawer"
        onKeyDown={drawer.onKeyDown}
        // Escape fires `cancel` at once and `close` a task later: aria-expanded follows at once, and
        // a late `close` does not shut a drawer opened again since.
        onCancel={() => setOpen(false)}
        onClose={(e) => {
          if (!e.currentTarget.open) setOpen(false);
        }}
        onClick={(e) => {
          if (e.target === e.currentTarget) setOpen(false);
        }}
        className="bg-sidebar text-sidebar-foreground m-0 h-dvh max-h-none w-72 max-w-[85vw] border-r p-0 backdrop:bg-black/50"
      >
        {open ? (
          <div className="relative flex h-full flex-col">
            <button
              type="button"
              aria-label="Close navigation"
              data-testid="menu-close"
              onClick={() => setOpen(false)}
              className="hover:bg-sidebar-accent absolute top-3 right-3 flex size-10 items-center justify-center rounded-md"
            >
              {closeIcon}
            </button>
            {children}
          </div>
        ) : null}
      </dialog>
    </>
  );
}
