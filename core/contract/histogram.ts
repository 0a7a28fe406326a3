/**
 * The bucket of `value` in a histogram with ascending upper bounds `bounds`: the first bound at
 * or above it, or `bounds.length` (the overflow bucket) above the last one.
 */
export function bucketIndex(bounds: readonly number[], value: number): number {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (value <= (bounds[mid] ?? Number.POSITIVE_INFINITY)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The `q` quantile (0–1) of a histogram: the upper bound of the bucket holding it, so merged
 * histograms give the same answer as one histogram of all their samples, exact to a bucket. A
 * quantile in the overflow bucket reads as the last bound; an empty histogram has none (`null`).
 * `counts` has one entry per bound plus the overflow bucket.
 */
export function histogramQuantile(
  bounds: readonly number[],
  counts: readonly number[],
  q: number,
): number | null {
  let total = 0;
  for (const c of counts) total += c;
  if (total <= 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i] ?? 0;
    if (seen >= rank) return bounds[Math.min(i, bounds.length - 1)] ?? null;
  }
  return bounds[bounds.length - 1] ?? null;
}

/**
 * Adds histogram `from` into `into`, bucket by bucket: histograms over the same bounds are sums,
 * so any two merge exactly, in any order.
 */
export function addCounts(into: number[], from: readonly number[]): void {
  for (let i = 0; i < into.length; i++) into[i] = (into[i] ?? 0) + (from[i] ?? 0);
}
