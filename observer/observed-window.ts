import { addCounts } from "../core/index.js";
import { emptyCounts, type MinuteCounts, type MinuteReading, pairKey } from "./minute-reading.js";

interface Sum {
  readonly country: string;
  readonly pool: string;
  readonly side: string;
  requests: number;
  readonly outcomes: Record<string, number>;
  readonly cache: Record<string, number>;
  starved: number;
  failovers: number;
  readonly ttfb: number[];
  ttfbSumMs: number;
}

/**
 * Each pair's counts (both sides of a canary together) summed over the newest `minutes` one-minute buckets of a reading (the
 * current minute and those before it): the window the `observed/` keys judge. The histograms
 * merge bucket by bucket, so a quantile of the sum is exact to a bucket.
 */
export function observedWindow(reading: MinuteReading, minutes: number): Map<string, MinuteCounts> {
  const sums = new Map<string, Sum>();
  for (const [minute, bucket] of reading.buckets) {
    if (minute <= reading.minute - minutes || minute > reading.minute) continue;
    for (const c of bucket.values()) {
      const key = pairKey(c.country, c.pool);
      let s = sums.get(key);
      if (!s) {
        const e = emptyCounts(c.country, c.pool);
        s = { ...e, outcomes: {}, cache: {}, ttfb: [...e.ttfb] };
        sums.set(key, s);
      }
      s.requests += c.requests;
      for (const [o, n] of Object.entries(c.outcomes)) s.outcomes[o] = (s.outcomes[o] ?? 0) + n;
      for (const [r, n] of Object.entries(c.cache ?? {})) s.cache[r] = (s.cache[r] ?? 0) + n;
      s.starved += c.starved;
      s.failovers += c.failovers;
      addCounts(s.ttfb, c.ttfb);
      s.ttfbSumMs += c.ttfbSumMs;
    }
  }
  return sums;
}
