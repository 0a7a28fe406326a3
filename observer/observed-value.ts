import { histogramQuantile, type Observed, TTFB_BUCKETS_MS } from "../core/index.js";
import { P90_REWRITE_MIN_MS, P90_REWRITE_SHARE } from "../heartbeat/published-health.js";
import type { MinuteCounts } from "./minute-reading.js";
import { ERROR_OUTCOMES } from "./observation-document.js";

/**
 * Error ratios at which an `observed/` key is rewritten when its ratio crosses one, whatever the
 * p90 does: 1 %, the `EdgeViewerErrors` alert's 5 %, 25 % and 50 %.
 */
export const ERROR_RATIO_WATERMARKS: readonly number[] = [0.01, 0.05, 0.25, 0.5];

/** The p90 written for a pair whose requests all failed before any response headers. */
export const NO_TTFB_P90_MS = 30_000;

/**
 * The `observed/{CC}/{pool}` value of a pair's window: the p90 time to first byte of its
 * histogram (a bucket's upper bound, as the edge reads it), the requests behind it, and the
 * share of them that the pool or the edge failed (4xx are the viewer's, not counted).
 */
export function observedOf(row: MinuteCounts): Observed {
  const errors = ERROR_OUTCOMES.reduce((a, o) => a + (row.outcomes[o] ?? 0), 0);
  const p90 = histogramQuantile(TTFB_BUCKETS_MS, row.ttfb, 0.9);
  return {
    p90_ms: p90 == null ? NO_TTFB_P90_MS : Math.round(p90),
    samples: row.requests,
    error_ratio: row.requests > 0 ? Math.round((errors / row.requests) * 10_000) / 10_000 : 0,
  };
}

function band(ratio: number): number {
  return ERROR_RATIO_WATERMARKS.filter((w) => ratio >= w).length;
}

/**
 * Whether `next` must be written over `written` (docs/reference.md §12): the p90 moved by more
 * than 10 % and more than 50 ms (the heartbeat's rule), or the error ratio crossed one of
 * {@link ERROR_RATIO_WATERMARKS}. A new sample count alone is not worth an etcd write.
 */
export function needsObservedRewrite(written: Observed | undefined, next: Observed): boolean {
  if (!written) return true;
  const moved = Math.abs(next.p90_ms - written.p90_ms);
  if (moved > P90_REWRITE_SHARE * written.p90_ms && moved > P90_REWRITE_MIN_MS) return true;
  return band(next.error_ratio) !== band(written.error_ratio);
}
