import type { Metric, Registry } from "prom-client";
import { TTFB_BUCKETS_MS } from "../core/index.js";
import { pairKey } from "./minute-reading.js";

/** Upper bounds of `edge_viewer_ttfb_seconds`, in seconds: the edge's own buckets. */
const BOUNDS_S: readonly number[] = TTFB_BUCKETS_MS.map((ms) => ms / 1000);

interface Series {
  readonly labels: { readonly country: string; readonly pool: string };
  readonly buckets: number[];
  sum: number;
}

/**
 * `edge_viewer_ttfb_seconds{country,pool}`: a Prometheus histogram over the edge's own buckets
 * (`TTFB_BUCKETS_MS`), whose counts are the edge's counts. prom-client's `Histogram` takes one
 * observation at a time, and a poll brings the edge's whole minute at once (thousands of
 * requests, millions over the observer's life when its totals are restored), so this metric
 * keeps the counts and prom-client's registry writes them out like any histogram.
 */
export class TtfbHistogram {
  readonly name = "edge_viewer_ttfb_seconds";
  readonly help =
    "viewers' time to first byte (the origin's response headers), per country and pool: the edge's own histogram, bucket for bucket";
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, Series>();

  constructor(registry: Registry) {
    // prom-client's registry takes any object with this metric's fields and get(); its typings
    // name only its own classes
    registry.registerMetric(this as unknown as Metric);
  }

  /** Adds counts (one per bucket, the last over 30 s) and their seconds to one series. */
  add(country: string, pool: string, counts: readonly number[], sumSeconds: number): void {
    const key = `${country}\u0000${pool}`;
    let s = this.series.get(key);
    if (!s) {
      s = {
        labels: { country, pool },
        buckets: new Array(BOUNDS_S.length + 1).fill(0),
        sum: 0,
      };
      this.series.set(key, s);
    }
    for (let i = 0; i < s.buckets.length; i++) s.buckets[i]! += counts[i] ?? 0;
    s.sum += sumSeconds;
  }

  /** Drops the series of the pairs (`CC/pool`) `live` does not hold; returns those pairs. */
  retain(live: ReadonlySet<string>): string[] {
    const gone: string[] = [];
    for (const [key, s] of this.series) {
      const pair = pairKey(s.labels.country, s.labels.pool);
      if (live.has(pair)) continue;
      this.series.delete(key);
      gone.push(pair);
    }
    return gone;
  }

  /** Every series' counts, for the state file. */
  snapshot(): { country: string; pool: string; buckets: number[]; sum: number }[] {
    return [...this.series.values()].map((s) => ({
      ...s.labels,
      buckets: [...s.buckets],
      sum: s.sum,
    }));
  }

  /** prom-client's registry reads the metric through this. */
  async get() {
    const values: {
      labels: Record<string, string | number>;
      value: number;
      metricName: string;
    }[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      BOUNDS_S.forEach((le, i) => {
        acc += s.buckets[i] ?? 0;
        values.push({ labels: { ...s.labels, le }, value: acc, metricName: `${this.name}_bucket` });
      });
      acc += s.buckets[BOUNDS_S.length] ?? 0;
      values.push({
        labels: { ...s.labels, le: "+Inf" },
        value: acc,
        metricName: `${this.name}_bucket`,
      });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: acc, metricName: `${this.name}_count` });
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    };
  }

  reset(): void {
    this.series.clear();
  }
}
