/** Order statistics of a sample, in the sample's unit. */
export interface Summary {
  readonly n: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** The nearest-rank percentile `p` (0–100) of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

/**
 * The median of `values` (sorted in place) and its distribution-free 95 % confidence interval:
 * the order statistics n/2 ∓ 0.98·√n (the binomial's normal approximation).
 */
export function medianWithCi(values: number[]): {
  p50: number;
  min: number;
  max: number;
  ci95: [number, number];
} {
  values.sort((x, y) => x - y);
  const n = values.length;
  const at = (k: number) => values[Math.min(n - 1, Math.max(0, k))] ?? Number.NaN;
  const half = 0.98 * Math.sqrt(n);
  return {
    p50: n % 2 ? at((n - 1) / 2) : (at(n / 2 - 1) + at(n / 2)) / 2,
    min: at(0),
    max: at(n - 1),
    ci95: [at(Math.floor(n / 2 - half) - 1), at(Math.ceil(n / 2 + half))],
  };
}

/** Summarises a sample (NaN fields for an empty one). */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    n: sorted.length,
    min: sorted[0] ?? Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/**
 * The most events that fall in any window of `windowMs` (half-open, sliding), e.g. KV writes
 * to one key within a second.
 */
export function maxInWindow(times: readonly number[], windowMs = 1_000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** Rounds to `digits` decimals (keeps results.json readable). */
export function round(v: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
