"use client";

import { useRouter } from "next/navigation";
import type * as React from "react";

import { announceNext } from "@/lib/announce";

/**
 * A plain anchor that navigates client-side (the page's server components are fetched, the rest of
 * the page and the focus stay). next/link adds its prefetching code to every page, which the First
 * Load JS budget has no room for. Modified clicks (new tab, new window,
 * download) keep the browser's own behaviour. `announce` is said by the list's status line once
 * the new page arrives; `scroll={false}` keeps the scroll position (sorting, paging);
 * `aria-disabled` links stay focusable but go nowhere.
 */
function Link({
  href,
  onClick,
  announce,
  scroll = true,
  replace = false,
  ...props
}: React.ComponentProps<"a"> & { href: string; announce?: string; scroll?: boolean; replace?: boolean }) {
  const router = useRouter();
  return (
    <a
      href={href}
      {...props}
      onClick={(event) => {
        onClick?.(event);
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        if (props["aria-disabled"] === true || props["aria-disabled"] === "true") return;
        if (announce !== undefined) announceNext(announce);
        if (replace) router.replace(href, { scroll });
        else router.push(href, { scroll });
      }}
    />
  );
}

export { Link };
