import { setTimeout as sleep } from "node:timers/promises";
/** Thrown when a readiness wait gives up. */
export class WaitTimeoutError extends Error {
  override readonly name = "WaitTimeoutError";
}

/** Options for {@link waitFor}. */
export interface WaitOptions {
  readonly what: string;
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Aborts the wait early (a component died, or Ctrl-C). */
  readonly signal?: AbortSignal;
}

/** Polls `check` until it returns a value other than `undefined`, within a bounded time. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  opts: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    opts.signal?.throwIfAborted();
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(`${opts.what} not ready after ${opts.timeoutMs / 1000} s`);
    }
    await sleep(opts.intervalMs ?? 200);
  }
}

/** GETs a URL with a short timeout; `undefined` on any network error. */
export async function probe(
  url: string,
  init: RequestInit = {},
  timeoutMs = 2_000,
): Promise<Response | undefined> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    return undefined;
  }
}
