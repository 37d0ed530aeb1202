"use client";

import { usePathname } from "next/navigation";
import { type ComponentType, type ReactNode, useEffect, useState } from "react";

import { Menu, X } from "@/components/icons";
import { Link } from "@/components/link";
import { ThemeToggle } from "@/components/theme-toggle";
import { Toaster } from "@/components/toaster";
import { useModal } from "@/hooks/use-modal";
import { cn } from "@/lib/utils";

export interface NavItem {
  title: string;
  url: string;
  icon: ComponentType;
  testId: string;
}

export interface Nav {
  title: string;
  items: readonly NavItem[];
}

/** The look of a sidebar entry (links, sign in/out, the theme toggle). */
export const sidebarItem =
  "text-sidebar-foreground hover:bg-sidebar-accent hover:text-sidebar-accent-foreground flex h-10 w-full items-center gap-2 rounded-md px-3 text-sm font-medium transition-colors [&_svg]:size-4";

/** Active by path prefix: a page's link stays active on its detail and create pages. */
function isActive(pathname: string, url: string): boolean {
  if (url === "/") return pathname === "/";
  return pathname === url || pathname.startsWith(`${url}/`);
}

function Sidebar({ nav, pathname, footer }: { nav: Nav; pathname: string; footer?: ReactNode }) {
  return (
    <>
      <div className="flex h-16 items-center gap-3 border-b px-5">
        <div className="bg-sidebar-primary text-sidebar-primary-foreground flex size-8 items-center justify-center rounded-lg text-sm font-semibold">
          {nav.title.charAt(0).toUpperCase()}
        </div>
        <div className="leading-tight">
          <div className="text-sm font-semibold">{nav.title}</div>
          <div className="text-muted-foreground text-xs">Admin</div>
        </div>
      </div>
      <nav aria-label="Pages" className="flex-1 space-y-1 overflow-y-auto p-3">
        {nav.items.map((item) => {
          const active = isActive(pathname, item.url);
          return (
            <Link
              key={item.url}
              href={item.url}
              data-testid={item.testId}
              data-active={active ? "true" : "false"}
              aria-current={active ? "page" : undefined}
              className={cn(sidebarItem, active && "bg-sidebar-accent text-sidebar-accent-foreground font-semibold")}
            >
              <item.icon />
              {item.title}
            </Link>
          );
        })}
      </nav>
      <div className="space-y-1 border-t p-3">
        {footer}
        <ThemeToggle className={sidebarItem} />
      </div>
    </>
  );
}

/**
 * The page frame: a skip link (the first Tab stop), the sidebar from the `md` breakpoint up, and
 * below it a top bar whose menu button opens the same navigation in a modal drawer (focus kept
 * inside, closed by Escape, by the close button, by a click outside and by navigating).
 */
export function AppShell({ nav, footer, children }: { nav: Nav; footer?: ReactNode; children: ReactNode }) {
  const pathname = usePathname() ?? "/";
  const [open, setOpen] = useState(false);
  const drawer = useModal(open);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new path means the user navigated
  useEffect(() => setOpen(false), [pathname]);
  return (
    <>
      <a
        href="#main"
        data-testid="skip-link"
        className="bg-background sr-only z-50 rounded-md border px-4 py-2 text-sm font-medium focus:not-sr-only focus:fixed focus:top-2 focus:left-2"
      >
        Skip to main content
      </a>
      <div className="min-h-svh md:flex">
        <aside data-testid="app-sidebar" className="bg-sidebar text-sidebar-foreground hidden w-64 shrink-0 border-r md:block">
          <div className="sticky top-0 flex h-svh flex-col">
            <Sidebar nav={nav} pathname={pathname} footer={footer} />
          </div>
        </aside>
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
            <Menu />
          </button>
          <span className="text-sm font-semibold">{nav.title}</span>
        </header>
        <dialog
          id="nav-drawer"
          ref={drawer.ref}
          aria-label="Navigation"
          data-testid="nav-drawer"
          onKeyDown={drawer.onKeyDown}
          onClose={() => setOpen(false)}
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
                <X />
              </button>
              <Sidebar nav={nav} pathname={pathname} footer={footer} />
            </div>
          ) : null}
        </dialog>
        <main id="main" tabIndex={-1} className="min-w-0 flex-1 focus:outline-none">
          <div className="w-full px-4 py-6 sm:px-6 md:py-8 lg:px-10">{children}</div>
        </main>
      </div>
      <Toaster />
    </>
  );
}
