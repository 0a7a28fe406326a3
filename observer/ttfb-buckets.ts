/**
 * Upper bounds (seconds) of `edge_viewer_ttfb_seconds`: 10 ms to 30 s, the edge's own range
 * (docs/reference.md §12), close enough that a quantile is within one bucket of the edge's.
 */
export const TTFB_BOUNDS_S: readonly number[] = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15,
  20, 30,
];

/** The edge's quantiles of one bucket of requests, in ms (absent: no request had a TTFB). */
export interface TtfbQuantiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

/**
 * How many of `n` times to first byte fall in each bucket of {@link TTFB_BOUNDS_S} (the last
 * entry is over 30 s), rebuilt from the edge's p50, p90 and p99: half at the p50, two fifths at
 * the p90 and the last tenth at the p99 (rounded up at the p50 and p90). The edge sends
 * quantiles, not buckets; so placed, the histogram's own p50 and p90 fall in the buckets of the
 * edge's.
 */
export function bucketCounts(n: number, q: TtfbQuantiles): number[] {
  const counts = new Array<number>(TTFB_BOUNDS_S.length + 1).fill(0);
  const half = Math.ceil(n * 0.5);
  const nine = Math.ceil(n * 0.9);
  counts[bucketOf(q.p50)]! += half;
  counts[bucketOf(q.p90)]! += nine - half;
  counts[bucketOf(q.p99)]! += n - nine;
  return counts;
}

/** Seconds that `n` times so placed add to the histogram's `_sum`. */
export function estimatedSumSeconds(n: number, q: TtfbQuantiles): number {
  return (n * (0.5 * q.p50 + 0.4 * q.p90 + 0.1 * q.p99)) / 1000;
}

/** The index of the bucket that holds `ms`. */
export function bucketOf(ms: number): number {
  const s = ms / 1000;
  const i = TTFB_BOUNDS_S.findIndex((b) => s <= b);
  return i < 0 ? TTFB_BOUNDS_S.length : i;
}

/**
 * What to add to `emitted` so that it holds the target's `n` times in all and each cumulative
 * count (what Prometheus's `le` series are) comes as close to the target's as counts that never
 * shrink can: the new times fill the lowest buckets whose cumulative count is short first, so a
 * quantile of the histogram is never above the target's bucket for lack of counts below it.
 */
export function reconcileBuckets(emitted: readonly number[], target: readonly number[]): number[] {
  const add = new Array<number>(target.length).fill(0);
  let left = target.reduce((a, b) => a + b, 0) - emitted.reduce((a, b) => a + b, 0);
  let targetCum = 0;
  let haveCum = 0;
  for (let i = 0; i < target.length && left > 0; i++) {
    targetCum += target[i] ?? 0;
    haveCum += emitted[i] ?? 0;
    const k = Math.min(left, Math.max(0, targetCum - haveCum));
    add[i] = k;
    haveCum += k;
    left -= k;
  }
  return add;
}
