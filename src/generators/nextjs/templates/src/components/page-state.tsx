"use client";

import type * as React from "react";
import { Inbox, LoaderCircle, Lock, RefreshCw, ServerOff, TriangleAlert } from "@/components/icons";
import { Link } from "@/components/link";

import { Button, buttonVariants } from "@/components/ui/button";
import { API_URL, type ApiError } from "@/lib/api";
import { cn } from "@/lib/utils";

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

/** Explains a failed request; an unreachable API gets its own message so the app is never blank. */
function ErrorState({ error, onRetry }: { error: ApiError; onRetry?: () => void }) {
  const retry = onRetry ? (
    <Button variant="outline" size="sm" onClick={onRetry}>
      <RefreshCw />
      Try again
    </Button>
  ) : null;
  if (error.status === 0) {
    return (
      <StateFrame testId="error-state" icon={<ServerOff className="size-5" />} title="The API is not reachable">
        <p className="max-w-md text-sm">
          Could not connect to <code className="bg-muted rounded px-1 py-0.5 font-mono text-xs">{API_URL}</code>. Check that the backend is
          running, then try again.
        </p>
        {retry}
      </StateFrame>
    );
  }
  if (error.status === 401) {
    return (
      <StateFrame testId="error-state" icon={<Lock className="size-5" />} title="Sign in required">
        <p className="max-w-md text-sm">{error.message}</p>
        <Link href="/login" className={cn(buttonVariants({ size: "sm" }))}>
          Sign in
        </Link>
      </StateFrame>
    );
  }
  const title = error.status === 403 ? "Not allowed" : "Something went wrong";
  return (
    <StateFrame testId="error-state" icon={<TriangleAlert className="size-5" />} title={title}>
      <p className="max-w-md text-sm">{error.message}</p>
      {error.status === 403 ? null : retry}
    </StateFrame>
  );
}

/** An inline error line (form and board messages), announced at once (role=alert). */
function ErrorNotice({ children, testId, className }: { children: React.ReactNode; testId?: string; className?: string }) {
  return (
    <div
      role="alert"
      data-testid={testId}
      className={cn(
        "border-destructive/30 bg-destructive/5 text-destructive flex items-start gap-2 rounded-lg border px-4 py-3 text-sm",
        className,
      )}
    >
      <TriangleAlert className="mt-0.5 size-4 shrink-0" />
      <div>{children}</div>
    </div>
  );
}

export { EmptyState, ErrorNotice, ErrorState, LoadingState };
