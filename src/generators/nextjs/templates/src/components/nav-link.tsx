"use client";

import { usePathname } from "next/navigation";
import type { ReactNode } from "react";

import { Link } from "@/components/link";

/** Active by path prefix: a page's link stays active on its detail and create pages. */
function isActive(pathname: string, url: string): boolean {
  if (url === "/") return pathname === "/";
  return pathname === url || pathname.startsWith(`${url}/`);
}

/** A sidebar link that marks itself as the current page (aria-current) by the browser's path. */
export function NavLink({ href, testId, className, children }: { href: string; testId: string; className: string; children: ReactNode }) {
  const active = isActive(usePathname() ?? "/", href);
  return (
    <Link
      href={href}
      data-testid={testId}
      data-active={active ? "true" : "false"}
      aria-current={active ? "page" : undefined}
      className={active ? `${className} bg-sidebar-accent text-sidebar-accent-foreground font-semibold` : className}
    >
      {children}
    </Link>
  );
}
