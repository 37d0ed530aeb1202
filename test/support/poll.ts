/**
 * Polls `fn` until it returns something other than undefined: for work that happens in the
 * background (agents, the dispatcher, the Healer's queue, a restart under `charter dev`).
 * `explain` says, when time runs out, what the background work did instead (its state, a log's
 * tail): the failure of a run on a loaded machine is then read from the report, not re-run.
 */
export async function until<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
  explain?: () => Promise<string> | string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) {
      const why = explain ? `:\n${await explain()}` : "";
      throw new Error(`condition not met in time${why}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
