import { setTimeout as sleep } from "node:timers/promises";

/** Polls `fn` until it returns a non-null value; `null` after `timeoutMs`. */
export async function pollUntil<T>(
  fn: () => Promise<T | null>,
  opts: { readonly timeoutMs: number; readonly intervalMs?: number },
): Promise<T | null> {
  const deadline = performance.now() + opts.timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (performance.now() > deadline) return null;
    if (opts.intervalMs) await sleep(opts.intervalMs);
    else await new Promise((r) => setImmediate(r));
  }
}
