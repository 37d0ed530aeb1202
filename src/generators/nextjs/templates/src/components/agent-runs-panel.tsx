"use client";

import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { useAsync } from "@/hooks/use-async";
import type { AgentRun, AgentRunList } from "@/lib/api";
import { request } from "@/lib/request";

const TONE: Record<string, "green" | "yellow" | "gray" | "blue"> = { applied: "green", fallback: "yellow", skipped: "gray" };

function value(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

function RunItem({ run }: { run: AgentRun }) {
  const changes = Object.entries(run.changes);
  return (
    <li className="space-y-1 py-3 text-sm" data-testid="agent-run" data-decision={run.decision}>
      <div className="flex flex-wrap items-center gap-2">
        <span className="font-medium">{run.agent}</span>
        <Badge variant={TONE[run.decision] ?? "blue"}>{run.decision}</Badge>
        <span className="text-muted-foreground">on {run.event}</span>
        {run.confidence !== null && <span className="text-muted-foreground">confidence {run.confidence.toFixed(2)}</span>}
        <time className="text-muted-foreground ml-auto text-xs" dateTime={run.started_at}>
          {new Date(run.started_at).toLocaleString()}
        </time>
      </div>
      {changes.length > 0 && <p>Changed: {changes.map(([k, v]) => `${k} = ${value(v)}`).join(", ")}</p>}
      {run.reason && <p className="text-muted-foreground">{run.reason}</p>}
      {run.ignored.length > 0 && <p className="text-muted-foreground">Ignored (not allowed): {run.ignored.join(", ")}</p>}
      {run.error && <p className="text-destructive">{run.error}</p>}
    </li>
  );
}

/** What the agents decided about a record, newest first (they run in the background). */
export function AgentRunsPanel({ path }: { path: string }) {
  const { state, reload } = useAsync(() => request<AgentRunList>("GET", path), [path]);
  return (
    <Card data-testid="agent-runs">
      <CardHeader className="flex flex-row items-center justify-between">
        <CardTitle>Agent runs</CardTitle>
        <Button variant="outline" size="sm" onClick={reload}>
          Refresh
        </Button>
      </CardHeader>
      <CardContent>
        {state.status === "loading" && <p className="text-muted-foreground text-sm">Loading…</p>}
        {state.status === "error" && (
          <p className="text-destructive text-sm" role="alert">
            {state.error.message}
          </p>
        )}
        {state.status === "ready" &&
          (state.data.items.length === 0 ? (
            <p className="text-muted-foreground text-sm">No agent has run on this record yet.</p>
          ) : (
            <ul className="divide-y">
              {state.data.items.map((run) => (
                <RunItem key={run.id} run={run} />
              ))}
            </ul>
          ))}
      </CardContent>
    </Card>
  );
}
