import { describe, expect, it } from "vitest";
import { bucketIndex, histogramQuantile } from "../../../core/contract/histogram.js";
import { TTFB_BUCKETS_MS } from "../../../core/contract/ttfb-buckets.js";

describe("bucketIndex", () => {
  it("puts a value in the first bucket whose upper bound holds it, above the last in the overflow", () => {
    const bounds = [10, 20, 40];
    expect([0, 10, 10.5, 20, 21, 40, 41, 1e9].map((v) => bucketIndex(bounds, v))).toEqual([
      0, 0, 1, 1, 2, 2, 3, 3,
    ]);
  });
});

describe("histogramQuantile", () => {
  it("is the upper bound of the bucket holding the quantile, null when empty", () => {
    const bounds = [10, 20, 40];
    expect(histogramQuantile(bounds, [0, 0, 0, 0], 0.5)).toBeNull();
    expect(histogramQuantile(bounds, [5, 4, 1, 0], 0.5)).toBe(10);
    expect(histogramQuantile(bounds, [5, 4, 1, 0], 0.9)).toBe(20);
    expect(histogramQuantile(bounds, [5, 4, 1, 0], 0.99)).toBe(40);
    expect(histogramQuantile(bounds, [0, 0, 0, 3], 0.5)).toBe(40);
  });

  it("of merged histograms is within one bucket of the samples' own quantile", () => {
    // Two isolates' samples, merged bucket by bucket, against the exact p90 of all of them.
    const a = Array.from({ length: 300 }, (_, i) => 5 + ((i * 37) % 900));
    const b = Array.from({ length: 200 }, (_, i) => 3500 + ((i * 53) % 1000));
    const counts = new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0);
    for (const v of [...a, ...b]) {
      const i = bucketIndex(TTFB_BUCKETS_MS, v);
      counts[i] = (counts[i] ?? 0) + 1;
    }
    const sorted = [...a, ...b].sort((x, y) => x - y);
    const exact = sorted[Math.ceil(0.9 * sorted.length) - 1] ?? 0;
    const estimate = histogramQuantile(TTFB_BUCKETS_MS, counts, 0.9) ?? 0;
    expect(bucketIndex(TTFB_BUCKETS_MS, estimate)).toBe(bucketIndex(TTFB_BUCKETS_MS, exact));
  });

  it("has bounds from 10 ms to 30 s, ascending", () => {
    expect(TTFB_BUCKETS_MS[0]).toBe(10);
    expect(TTFB_BUCKETS_MS.at(-1)).toBe(30_000);
    expect(TTFB_BUCKETS_MS.every((b, i) => i === 0 || b > (TTFB_BUCKETS_MS[i - 1] ?? 0))).toBe(
      true,
    );
  });
});
