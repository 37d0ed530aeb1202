import type { ReactNode } from "react";

import { Drawer } from "@/components/drawer";
import { Menu, Moon, X } from "@/components/icons";
import { NavLink } from "@/components/nav-link";
import { ThemeToggle } from "@/components/theme-toggle";
import { Toaster } from "@/components/toaster";

export interface NavItem {
  title: string;
  url: string;
  icon: ReactNode;
  testId: string;
}

export interface Nav {
  title: string;
  items: readonly NavItem[];
}

/** The look of a sidebar entry (links, sign in/out, the theme toggle). */
export const sidebarItem =
  "text-sidebar-foreground hover:bg-sidebar-accent hover:text-sidebar-accent-foreground flex h-10 w-full items-center gap-2 rounded-md px-3 text-sm font-medium transition-colors [&_svg]:size-4";

function Sidebar({ nav, footer }: { nav: Nav; footer?: ReactNode }) {
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
        {nav.items.map((item) => (
          <NavLink key={item.url} href={item.url} testId={item.testId} className={sidebarItem}>
            {item.icon}
            {item.title}
          </NavLink>
        ))}
      </nav>
      <div className="space-y-1 border-t p-3">
        {footer}
        <ThemeToggle className={sidebarItem}>
          <Moon />
          Dark theme
        </ThemeToggle>
      </div>
    </>
  );
}

/**
 * The page frame, rendered on the server: a skip link (the first Tab stop), the sidebar from the
 * `md` breakpoint up, and below it a top bar whose menu button opens the same navigation in a
 * modal drawer (the Drawer island: focus kept inside, closed by Escape, by the close button, by a
 * click outside and by navigating). Active links are marked by NavLink (pathname.startsWith(`${url}/`)).
 */
export function AppShell({ nav, footer, children }: { nav: Nav; footer?: ReactNode; children: ReactNode }) {
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
            <Sidebar nav={nav} footer={footer} />
          </div>
        </aside>
        <Drawer title={nav.title} menuIcon={<Menu />} closeIcon={<X />}>
          <Sidebar nav={nav} footer={footer} />
        </Drawer>
        <main id="main" tabIndex={-1} className="min-w-0 flex-1 focus:outline-none">
          <div className="w-full px-4 py-6 sm:px-6 md:py-8 lg:px-10">{children}</div>
        </main>
      </div>
      <Toaster />
    </>
  );
}
