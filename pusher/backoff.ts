import type { IOptions } from "etcd3";

/** Exponential backoff settings, in milliseconds. */
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

/**
 * Delay before retry number `attempt` (1-based): exponential with full jitter on the upper half,
 * never less than a server's `Retry-After`.
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = exp / 2 + random() * (exp / 2);
  return Math.max(Math.round(jittered), retryAfterMs ?? 0);
}

type WatchBackoff = NonNullable<NonNullable<IOptions["faultHandling"]>["watchBackoff"]>;

/**
 * etcd3's watch reconnect backoff, capped: its default grows to 30 s, which would leave the pusher
 * blind for that long after an etcd restart.
 */
export function cappedWatchBackoff(baseMs: number, maxMs: number, attempt = 1): WatchBackoff {
  return {
    duration: backoffDelay(attempt, { baseMs, maxMs }),
    next: () => cappedWatchBackoff(baseMs, maxMs, attempt + 1),
  };
}
