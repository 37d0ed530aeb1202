"use client";

import { lazy, Suspense } from "react";

// The agent runs load on their own, after the record (a chunk of their own, out of the first load).
const Panel = lazy(() => import("@/components/agent-runs-panel").then((m) => ({ default: m.AgentRunsPanel })));

/** What the agents decided about a record (`path`: the backend's /{base}/{id}/agent-runs). */
export function AgentRuns({ path }: { path: string }) {
  return (
    <Suspense fallback={null}>
      <Panel path={path} />
    </Suspense>
  );
}
