import { describe, expect, it } from "vitest";
import { pairedDifference, pairedRatio, type SideTally } from "../../../bench/lib/sliced-load.js";

/** A side whose windows served `rates` req/s at `cpuUs` µs per request, 100 ms each. */
function side(rates: number[], cpuUs: number[]): SideTally {
  const requests = rates.map((r) => r / 10);
  return {
    requests: requests.reduce((a, b) => a + b, 0),
    non2xx: 0,
    windowMs: rates.length * 100,
    cpuSeconds: requests.reduce((sum, n, i) => sum + (n * (cpuUs[i] ?? 0)) / 1e6, 0),
    windowRates: rates,
    windowCpuUs: cpuUs,
    latenciesMs: [],
  };
}

describe("pairedDifference: CPU per request, cycle by cycle", () => {
  it("is the median of adjacent windows' differences: one disturbed window moves it not", () => {
    const base = side([1000, 1000, 1000, 1000, 1000], [800, 810, 790, 805, 800]);
    // One window of the other side hit by a neighbour's burst: +400 µs there.
    const other = side([1000, 1000, 1000, 1000, 1000], [810, 820, 1200, 815, 810]);
    const d = pairedDifference(other, base);
    expect(d.p50).toBe(10);
    expect(d.cycles).toBe(5);
    // The total over total carries the burst.
    expect(d.total).toBeCloseTo(90, 5);
    expect(d.ci95[0]).toBeLessThanOrEqual(d.p50);
    expect(d.ci95[1]).toBeGreaterThanOrEqual(d.p50);
  });

  it("skips a cycle where either window served nothing", () => {
    const a = side([1000, 0, 1000], [900, Number.NaN, 900]);
    const b = side([1000, 1000, 1000], [850, 850, 850]);
    expect(pairedDifference(a, b)).toMatchObject({ p50: 50, cycles: 2 });
  });
});

describe("pairedRatio: throughput, cycle by cycle", () => {
  it("is the median of adjacent windows' ratios, with an interval around it", () => {
    const a = side([900, 950, 100, 960, 940], [1, 1, 1, 1, 1]);
    const b = side([1000, 1000, 1000, 1000, 1000], [1, 1, 1, 1, 1]);
    const r = pairedRatio(a, b);
    expect(r.p50).toBeCloseTo(0.94, 5);
    expect(r.min).toBeCloseTo(0.1, 5);
    expect(r.ci95[0]).toBeLessThanOrEqual(r.p50);
    expect(r.ci95[1]).toBeGreaterThanOrEqual(r.p50);
  });
});
