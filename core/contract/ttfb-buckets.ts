/**
 * Upper bounds, in milliseconds, of the time-to-first-byte histogram the edge keeps per country
 * and pool (docs/reference.md §12): 10 ms to 30 s, about 1.25× apart, plus an overflow bucket
 * above 30 s. The Worker and the observer share them, so histograms merge bucket by bucket.
 */
export const TTFB_BUCKETS_MS: readonly number[] = [
  10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 250, 300, 400, 500, 600, 750, 1000, 1250,
  1500, 2000, 2500, 3000, 4000, 5000, 6000, 7500, 10_000, 12_500, 15_000, 20_000, 25_000, 30_000,
];
