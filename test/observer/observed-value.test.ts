import { describe, expect, it } from "vitest";
import { bucketIndex, TTFB_BUCKETS_MS } from "../../core/index.js";
import { NO_TTFB_P90_MS, needsObservedRewrite, observedOf } from "../../observer/observed-value.js";

/** A pair's window: these outcomes, and these times to first byte in the edge's buckets. */
const row = (
  outcomes: Record<string, number>,
  ttfbMs: readonly number[] = [],
  cache?: Record<string, number>,
) => {
  const ttfb = new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0);
  for (const ms of ttfbMs) ttfb[bucketIndex(TTFB_BUCKETS_MS, ms)]! += 1;
  return {
    country: "BR",
    pool: "us-east",
    side: "",
    requests: Object.values(outcomes).reduce((a, b) => a + b, 0),
    outcomes,
    ...(cache ? { cache } : {}),
    failovers: 0,
    starved: 0,
    ttfb,
    ttfbSumMs: ttfbMs.reduce((a, b) => a + b, 0),
  };
};

describe("observedOf", () => {
  it("p90 of the histogram (its bucket's bound), requests as samples, the pool's and the edge's failures as the error ratio (4xx not)", () => {
    // 97 times: 80 of 120 ms, 17 of 2900 ms; the 88th is in the bucket up to 3000 ms
    const times = [...new Array<number>(80).fill(120), ...new Array<number>(17).fill(2900)];
    expect(
      observedOf(
        row(
          { ok: 90, client_error: 5, origin_error: 2, timeout: 1, unreachable: 1, edge_error: 1 },
          times,
        ),
      ),
    ).toEqual({ p90_ms: 3000, samples: 100, error_ratio: 0.05 });
    expect(observedOf(row({ ok: 90 }, new Array<number>(90).fill(120))).p90_ms).toBe(125);
  });
  it("requests that all failed before response headers are as slow as the edge measures", () => {
    expect(observedOf(row({ timeout: 60 }))).toEqual({
      p90_ms: NO_TTFB_P90_MS,
      samples: 60,
      error_ratio: 1,
    });
  });
});

describe("observedOf's hit ratio", () => {
  it("is the share of the requests with a cache result that were hits, edge refusals left out", () => {
    const o = observedOf(
      row({ ok: 100, client_error: 4 }, [], { hit: 75, miss: 20, bypass: 4, stale: 1 }),
    );
    expect(o.hit_ratio).toBe(0.75);
    expect(o.samples).toBe(104);
  });
  it("is absent when the edge counted no cache result (an edge without the cache counts)", () => {
    expect(observedOf(row({ ok: 10 }))).not.toHaveProperty("hit_ratio");
    expect(observedOf(row({ ok: 10 }, [], {}))).not.toHaveProperty("hit_ratio");
  });
});

describe("needsObservedRewrite", () => {
  const w = { p90_ms: 1000, samples: 400, error_ratio: 0.002 };
  it.each([
    [{ ...w, samples: 9000 }, false, "more samples alone"],
    [{ ...w, p90_ms: 1090 }, false, "a 9 % move"],
    [{ ...w, p90_ms: 1101 }, true, "more than 10 % and 50 ms"],
    [{ ...w, p90_ms: 899 }, true, "down by more than 10 %"],
    [{ ...w, error_ratio: 0.009 }, false, "an error ratio under the first watermark"],
    [{ ...w, error_ratio: 0.011 }, true, "crossing 1 %"],
    [{ ...w, error_ratio: 0.06 }, true, "crossing 5 %"],
  ])("%j: %s (%s)", (next, expected) => {
    expect(needsObservedRewrite(w, next)).toBe(expected);
  });
  it("a fast pool's 10 % under 50 ms is not a move", () => {
    expect(needsObservedRewrite({ ...w, p90_ms: 100 }, { ...w, p90_ms: 140 })).toBe(false);
  });
  it.each<[number | undefined, number | undefined, boolean, string]>([
    [undefined, 0.3, true, "a hit ratio appears"],
    [0.3, undefined, true, "a hit ratio goes"],
    [0.3, 0.45, false, "a move within a band"],
    [0.3, 0.55, true, "crossing 50 %"],
    [0.95, 0.85, true, "falling under 90 %"],
  ])("hit ratio %s -> %s: %s (%s)", (before, after, expected) => {
    const at = (r: number | undefined) => (r === undefined ? w : { ...w, hit_ratio: r });
    expect(needsObservedRewrite(at(before), at(after))).toBe(expected);
  });
  it("an unwritten pair is written", () => {
    expect(needsObservedRewrite(undefined, w)).toBe(true);
  });
});
