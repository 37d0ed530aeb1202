import { redirect } from "next/navigation";
import type * as React from "react";

import { Inbox, LoaderCircle, RefreshCw, ServerOff, TriangleAlert } from "@/components/icons";
import { buttonVariants } from "@/components/ui/button";
import { loginHref } from "@/lib/next-path";
import type { ApiError } from "@/lib/request";
import { API_URL } from "@/lib/server-api";

export { ErrorNotice } from "@/components/error-notice";

function StateFrame({
  icon,
  title,
  children,
  testId,
}: {
  icon: React.ReactNode;
  title: string;
  children?: React.ReactNode;
  testId: string;
}) {
  return (
    <div
      data-testid={testId}
      className="text-muted-foreground flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed px-6 py-14 text-center"
    >
      <div className="bg-muted text-foreground flex size-11 items-center justify-center rounded-full">{icon}</div>
      <h2 className="text-foreground text-base font-medium">{title}</h2>
      {children}
    </div>
  );
}

/** Announced politely (role=status), so screen-reader users know the page is waiting. */
function LoadingState({ label = "Loading…" }: { label?: string }) {
  return (
    <div role="status" data-testid="loading-state" className="text-muted-foreground flex items-center justify-center gap-2 py-14 text-sm">
      <LoaderCircle className="size-4 animate-spin" />
      {label}
    </div>
  );
}

function EmptyState({ title, description, action }: { title: string; description?: string; action?: React.ReactNode }) {
  return (
    <StateFrame testId="empty-state" icon={<Inbox className="size-5" />} title={title}>
      {description ? <p className="max-w-sm text-sm">{description}</p> : null}
      {action}
    </StateFrame>
  );
}

/**
 * Explains a failed request; an unreachable API gets its own message so the app is never blank.
 * `retry` is the address to load again (the page itself).
 */
function ErrorState({ error, retry }: { error: ApiError; retry?: string }) {
  const again = retry ? (
    <a href={retry} className={buttonVariants({ variant: "outline", size: "sm" })}>
      <RefreshCw />
      Try again
    </a>
  ) : null;
  if (error.status === 0) {
    return (
      <StateFrame testId="error-state" icon={<ServerOff className="size-5" />} title="The API is not reachable">
        <p className="max-w-md text-sm">
          Could not connect to <code className="bg-muted rounded px-1 py-0.5 font-mono text-xs">{API_URL}</code>. Check that the backend is
          running, then try again.
        </p>
        {again}
      </StateFrame>
    );
  }
  // Signed out, or the session expired: sign in, then come back here. The backend's 401 decides,
  // not the cookie's presence: with AUTH_ENABLED=false the pages are open without one.
  if (error.status === 401) redirect(loginHref(retry ?? "/"));
  const title = error.status === 403 ? "Not allowed" : "Something went wrong";
  return (
    <StateFrame testId="error-state" icon={<TriangleAlert className="size-5" />} title={title}>
      <p className="max-w-md text-sm">{error.message}</p>
      {error.status === 403 ? null : again}
    </StateFrame>
  );
}

export { EmptyState, ErrorState, LoadingState };
