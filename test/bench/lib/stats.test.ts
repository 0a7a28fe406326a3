import { describe, expect, it } from "vitest";
import { medianWithCi, percentile } from "../../../bench/lib/stats.js";

describe("medianWithCi", () => {
  it("gives the order statistics 40 and 61 of 100 as the median's 95 % interval", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    const m = medianWithCi(values);
    expect(m.p50).toBe(50.5);
    expect(m.ci95).toEqual([40, 61]);
    expect([m.min, m.max]).toEqual([1, 100]);
  });

  it("widens as the sample shrinks, and never leaves the sample", () => {
    const small = medianWithCi([5, 1, 4, 2, 3]);
    expect(small.p50).toBe(3);
    expect(small.ci95).toEqual([1, 5]);
  });

  it("one outlier moves the median's interval by at most one rank", () => {
    const base = Array.from({ length: 50 }, (_, i) => 10 + i * 0.1);
    const spiked = [...base.slice(0, 49), 10_000];
    expect(medianWithCi(spiked).ci95[0]).toBe(medianWithCi(base).ci95[0]);
    expect(medianWithCi(spiked).p50).toBe(medianWithCi(base).p50);
  });
});

describe("percentile", () => {
  it("is the nearest rank: p99 of 100 values is the second highest, not the max", () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted.slice(0, 50), 99)).toBe(50);
  });
});
