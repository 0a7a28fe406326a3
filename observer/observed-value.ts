import { histogramQuantile, type Observed, TTFB_BUCKETS_MS } from "../core/index.js";
import { P90_REWRITE_MIN_MS, P90_REWRITE_SHARE } from "../heartbeat/published-health.js";
import type { MinuteCounts } from "./minute-reading.js";
import { ERROR_OUTCOMES } from "./observation-document.js";

/**
 * Error ratios at which an `observed/` key is rewritten when its ratio crosses one, whatever the
 * p90 does: 1 %, the `EdgeViewerErrors` alert's 5 %, 25 % and 50 %.
 */
export const ERROR_RATIO_WATERMARKS: readonly number[] = [0.01, 0.05, 0.25, 0.5];

/**
 * Hit ratios at which an `observed/` key is rewritten when its ratio crosses one: a cache that
 * warms up or goes cold shows without a write per poll.
 */
export const HIT_RATIO_WATERMARKS: readonly number[] = [0.25, 0.5, 0.75, 0.9];

/** The p90 written for a pair whose requests all failed before any response headers. */
export const NO_TTFB_P90_MS = 30_000;

/**
 * The `observed/{CC}/{pool}` value of a pair's window: the p90 time to first byte of its
 * histogram (a bucket's upper bound, as the edge reads it), the requests behind it, and the
 * share of them that the pool or the edge failed (4xx are the viewer's, not counted), and the
 * share of the requests with a cache result that were a `hit`, when the edge counted any.
 */
export function observedOf(row: MinuteCounts): Observed {
  const errors = ERROR_OUTCOMES.reduce((a, o) => a + (row.outcomes[o] ?? 0), 0);
  const p90 = histogramQuantile(TTFB_BUCKETS_MS, row.ttfb, 0.9);
  const looked = Object.values(row.cache ?? {}).reduce((a, n) => a + n, 0);
  return {
    p90_ms: p90 == null ? NO_TTFB_P90_MS : Math.round(p90),
    samples: row.requests,
    error_ratio: row.requests > 0 ? ratio(errors, row.requests) : 0,
    ...(looked > 0 ? { hit_ratio: ratio(row.cache?.hit ?? 0, looked) } : {}),
  };
}

function ratio(part: number, whole: number): number {
  return Math.round((part / whole) * 10_000) / 10_000;
}

function band(ratio: number, watermarks: readonly number[]): number {
  return watermarks.filter((w) => ratio >= w).length;
}

function hitBand(o: Observed): number {
  return o.hit_ratio === undefined ? -1 : band(o.hit_ratio, HIT_RATIO_WATERMARKS);
}

/**
 * Whether `next` must be written over `written` (docs/reference.md §12): the p90 moved by more
 * than 10 % and more than 50 ms (the heartbeat's rule), or the error ratio crossed one of
 * {@link ERROR_RATIO_WATERMARKS}, or the hit ratio appeared, went or crossed one of
 * {@link HIT_RATIO_WATERMARKS}. A new sample count alone is not worth an etcd write.
 */
export function needsObservedRewrite(written: Observed | undefined, next: Observed): boolean {
  if (!written) return true;
  const moved = Math.abs(next.p90_ms - written.p90_ms);
  if (moved > P90_REWRITE_SHARE * written.p90_ms && moved > P90_REWRITE_MIN_MS) return true;
  if (hitBand(next) !== hitBand(written)) return true;
  return (
    band(next.error_ratio, ERROR_RATIO_WATERMARKS) !==
    band(written.error_ratio, ERROR_RATIO_WATERMARKS)
  );
}
