"use client";

import { type DependencyList, useCallback, useEffect, useState } from "react";

import { type ApiError, toApiError } from "@/lib/request";

export type AsyncState<T> = { status: "loading" } | { status: "error"; error: ApiError } | { status: "ready"; data: T };

/**
 * Runs `load` in the browser whenever `deps` change. Pages fetch on the client on purpose: the app
 * renders (and explains the problem) even when the API is down. While a reload runs, the last
 * data stays on screen with `busy` set, so the control that asked for it keeps its focus.
 */
export function useAsync<T>(load: () => Promise<T>, deps: DependencyList) {
  const [state, setState] = useState<AsyncState<T>>({ status: "loading" });
  const [busy, setBusy] = useState(true);
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller lists what `load` depends on
  useEffect(() => {
    let alive = true;
    setBusy(true);
    setState((s) => (s.status === "ready" ? s : { status: "loading" }));
    load()
      .then(
        (data) => {
          if (alive) setState({ status: "ready", data });
        },
        (e: unknown) => {
          if (alive) setState({ status: "error", error: toApiError(e) });
        },
      )
      .finally(() => {
        if (alive) setBusy(false);
      });
    return () => {
      alive = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const setData = useCallback((data: T) => setState({ status: "ready", data }), []);
  return { state, busy, reload, setData };
}
