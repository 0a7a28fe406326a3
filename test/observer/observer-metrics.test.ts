import { describe, expect, it } from "vitest";
import { TTFB_BUCKETS_MS } from "../../core/index.js";
import type { CounterIncrement } from "../../observer/minute-ledger.js";
import { ObserverMetrics } from "../../observer/observer-metrics.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";

/** One pair's gain: `ok` requests, one starved, one failover, all at the first TTFB bucket. */
function gain(country: string, pool: string, ok: number): CounterIncrement {
  const ttfb = new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0);
  ttfb[0] = ok;
  return {
    country,
    pool,
    outcomes: { ok },
    cache: { hit: ok },
    starved: 1,
    failovers: 1,
    ttfb,
    ttfbSeconds: ok * 0.01,
  };
}

/** The `edge_viewer_*` sample lines of one pair. */
async function pairLines(m: ObserverMetrics, country: string, pool: string): Promise<string[]> {
  return (await m.registry.metrics())
    .split("\n")
    .filter(
      (l) => l.startsWith("edge_viewer_") && l.includes(`country="${country}",pool="${pool}"`),
    );
}

describe("ObserverMetrics", () => {
  it("drops every series and total of a pair the edge no longer keeps, and keeps the others'", async () => {
    const m = new ObserverMetrics();
    m.add(gain("BR", "tmp-7", 5));
    m.add(gain("DE", "fra-1", 3));
    expect((await pairLines(m, "BR", "tmp-7")).length).toBeGreaterThan(TTFB_BUCKETS_MS.length);

    expect(m.retain(new Set(["DE/fra-1"]))).toBe(1);
    expect(await pairLines(m, "BR", "tmp-7")).toEqual([]);
    const text = parsePromText(await m.registry.metrics());
    expect(
      sampleValue(text, "edge_viewer_requests_total", {
        country: "DE",
        pool: "fra-1",
        outcome: "ok",
      }),
    ).toBe(3);
    expect(
      sampleValue(text, "edge_viewer_ttfb_seconds_count", { country: "DE", pool: "fra-1" }),
    ).toBe(3);
    const totals = m.totalsJson();
    for (const rows of [
      totals.requests,
      totals.starved,
      totals.failovers,
      totals.cache ?? [],
      totals.ttfb,
    ])
      expect(rows.map((r) => `${r.country}/${r.pool}`)).toEqual(["DE/fra-1"]);
    expect(m.retain(new Set(["DE/fra-1"]))).toBe(0);
  });

  it("a pair whose viewers come back after it was dropped counts again from zero", async () => {
    const m = new ObserverMetrics();
    m.add(gain("BR", "tmp-7", 5));
    m.retain(new Set());
    m.add(gain("BR", "tmp-7", 2));
    const text = parsePromText(await m.registry.metrics());
    expect(
      sampleValue(text, "edge_viewer_requests_total", {
        country: "BR",
        pool: "tmp-7",
        outcome: "ok",
      }),
    ).toBe(2);
    expect(sampleValue(text, "edge_viewer_starved_total", { country: "BR", pool: "tmp-7" })).toBe(
      1,
    );
    expect(
      sampleValue(text, "edge_viewer_ttfb_seconds_count", { country: "BR", pool: "tmp-7" }),
    ).toBe(2);
  });
});
