/**
 * Polls `fn` until it returns something other than undefined: for work that happens in the
 * background (agents, the dispatcher, the Healer's queue, a restart under `charter dev`).
 */
export async function until<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}
