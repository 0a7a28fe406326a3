import { isRetryableKvError, KvError } from "../adapters/kv/kv-sink.js";
import { type BackoffPolicy, backoffDelay } from "./backoff.js";

/** Attempts past this count wait as long as this one: the backoff stays at its cap. */
const MAX_COUNTED_ATTEMPTS = 30;

/**
 * The wait before the next KV attempt after failure number `attempts`: exponential backoff with
 * jitter, never shorter than the API's `Retry-After`. An error retrying cannot fix (a bad token, a
 * bad request) still retries, at the cap: an operator may fix it while the pusher runs.
 */
export function kvRetryDelay(
  e: unknown,
  attempts: number,
  policy: BackoffPolicy,
): { readonly delayMs: number; readonly retryable: boolean } {
  const retryable = isRetryableKvError(e);
  const retryAfterMs = e instanceof KvError ? e.retryAfterMs : undefined;
  const attempt = retryable ? Math.min(attempts, MAX_COUNTED_ATTEMPTS) : MAX_COUNTED_ATTEMPTS;
  return { delayMs: backoffDelay(attempt, policy, retryAfterMs), retryable };
}
