import { describe, expect, it } from "vitest";
import { bucketIndex, TTFB_BUCKETS_MS } from "../../core/index.js";
import { NO_TTFB_P90_MS, needsObservedRewrite, observedOf } from "../../observer/observed-value.js";

/** A pair's window: these outcomes, and these times to first byte in the edge's buckets. */
const row = (outcomes: Record<string, number>, ttfbMs: readonly number[] = []) => {
  const ttfb = new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0);
  for (const ms of ttfbMs) ttfb[bucketIndex(TTFB_BUCKETS_MS, ms)]! += 1;
  return {
    country: "BR",
    pool: "us-east",
    side: "",
    requests: Object.values(outcomes).reduce((a, b) => a + b, 0),
    outcomes,
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
  it("an unwritten pair is written", () => {
    expect(needsObservedRewrite(undefined, w)).toBe(true);
  });
});
