import { histogramQuantile } from "../../core/contract/histogram.js";
import {
  CACHE_RESULTS,
  type CacheResult,
  type ObservationRow,
  OUTCOMES,
  type Outcome,
} from "../../core/contract/observations.js";
import { TTFB_BUCKETS_MS } from "../../core/contract/ttfb-buckets.js";
import { emptyTally, mergeTally, type Tally } from "./tally.js";
import type { TallyRow } from "./tally-row.js";
import { THROUGHPUT_BUCKETS_KBPS } from "./throughput-buckets.js";

function isoMinute(minute: number): string {
  return new Date(minute * 60_000).toISOString();
}

function rowOf(
  country: string,
  pool: string,
  side: string,
  minute: number | null,
  t: Tally,
): ObservationRow {
  const outcomes = Object.fromEntries(OUTCOMES.map((o, i) => [o, t.outcomes[i] ?? 0])) as Record<
    Outcome,
    number
  >;
  return {
    country,
    pool,
    ...(side === "" ? {} : { side }),
    ...(minute === null ? {} : { minute: isoMinute(minute) }),
    requests: t.requests,
    outcomes,
    cache: Object.fromEntries(CACHE_RESULTS.map((r, i) => [r, t.cache[i] ?? 0])) as Record<
      CacheResult,
      number
    >,
    failovers: t.failovers,
    ttfb_ms: {
      p50: histogramQuantile(TTFB_BUCKETS_MS, t.ttfb, 0.5),
      p90: histogramQuantile(TTFB_BUCKETS_MS, t.ttfb, 0.9),
      p99: histogramQuantile(TTFB_BUCKETS_MS, t.ttfb, 0.99),
    },
    ttfb_counts: t.ttfb,
    ttfb_sum_ms: t.ttfbSumMs,
    starved: t.starved,
    cmcd_requests: t.cmcd,
    throughput_kbps_p50: histogramQuantile(THROUGHPUT_BUCKETS_KBPS, t.throughput, 0.5),
  };
}

/**
 * The endpoint's rows from the shards' tally rows: merged per (country, pool, canary side), or
 * per (minute, country, pool, side) with `byMinute`; sorted by country, pool, side, then minute.
 */
export function observationRows(rows: readonly TallyRow[], byMinute: boolean): ObservationRow[] {
  const sums = new Map<
    string,
    { country: string; pool: string; side: string; minute: number | null; t: Tally }
  >();
  for (const r of rows) {
    const minute = byMinute ? r.minute : null;
    const side = r.side ?? "";
    const key = `${r.country}|${r.pool}|${side}|${minute ?? ""}`;
    let s = sums.get(key);
    if (!s) {
      s = { country: r.country, pool: r.pool, side, minute, t: emptyTally() };
      sums.set(key, s);
    }
    mergeTally(s.t, r.tally);
  }
  return [...sums.values()]
    .sort(
      (a, b) =>
        a.country.localeCompare(b.country) ||
        a.pool.localeCompare(b.pool) ||
        a.side.localeCompare(b.side) ||
        (a.minute ?? 0) - (b.minute ?? 0),
    )
    .map((s) => rowOf(s.country, s.pool, s.side, s.minute, s.t));
}
