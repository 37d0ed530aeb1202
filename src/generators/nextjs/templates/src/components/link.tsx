"use client";

import { useRouter } from "next/navigation";
import type * as React from "react";

/**
 * A plain anchor that navigates client-side. next/link adds about 7 kB gzip of prefetching code
 * to every page; this app's pages are small shells that fetch their data in the browser, so
 * prefetching buys little and the First Load JS budget (140 kB) does not have room for it.
 * Modified clicks (new tab, new window, download) keep the browser's own behaviour.
 */
function Link({ href, onClick, ...props }: React.ComponentProps<"a"> & { href: string }) {
  const router = useRouter();
  return (
    <a
      href={href}
      {...props}
      onClick={(event) => {
        onClick?.(event);
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        router.push(href);
      }}
    />
  );
}

export { Link };
