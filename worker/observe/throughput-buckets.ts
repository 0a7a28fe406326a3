/**
 * Upper bounds, in kbit/s, of the histogram of players' reported throughput: 100 kbit/s to
 * 100 Mbit/s, plus an overflow bucket. Its median is `throughput_kbps_p50`.
 */
export const THROUGHPUT_BUCKETS_KBPS: readonly number[] = [
  100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10_000, 15_000, 20_000, 30_000,
  50_000, 75_000, 100_000,
];
