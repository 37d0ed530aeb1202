"use client";

import { type DependencyList, useCallback, useEffect, useState } from "react";

import { type ApiError, toApiError } from "@/lib/api";

export type AsyncState<T> = { status: "loading" } | { status: "error"; error: ApiError } | { status: "ready"; data: T };

/**
 * Runs `load` in the browser whenever `deps` change. Pages fetch on the client on purpose: the app
 * renders (and explains the problem) even when the API is down.
 */
export function useAsync<T>(load: () => Promise<T>, deps: DependencyList) {
  const [state, setState] = useState<AsyncState<T>>({ status: "loading" });
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller lists what `load` depends on
  useEffect(() => {
    let alive = true;
    setState({ status: "loading" });
    load().then(
      (data) => {
        if (alive) setState({ status: "ready", data });
      },
      (e: unknown) => {
        if (alive) setState({ status: "error", error: toApiError(e) });
      },
    );
    return () => {
      alive = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const setData = useCallback((data: T) => setState({ status: "ready", data }), []);
  return { state, reload, setData };
}
