import type { ObservationDocument, ObservationRow } from "./observation-document.js";
import type { TtfbQuantiles } from "./ttfb-buckets.js";

/** What one (country, pool) got in one of the edge's one-minute buckets, so far. */
export interface MinuteCounts {
  readonly country: string;
  readonly pool: string;
  readonly requests: number;
  readonly outcomes: Readonly<Record<string, number>>;
  readonly starved: number;
  readonly failovers: number;
  /** The bucket's own quantiles: known for the current minute only (`window=60`). */
  readonly quantiles?: TtfbQuantiles;
  /** The quantiles of the narrowest window that holds the bucket, for an older minute. */
  readonly windowQuantiles?: TtfbQuantiles;
}

/** The edge's buckets by minute (ms since the epoch / 60,000), each by `country/pool`. */
export interface MinuteReading {
  /** The current minute: the one `until` falls in. */
  readonly minute: number;
  readonly buckets: ReadonlyMap<number, ReadonlyMap<string, MinuteCounts>>;
}

/** The key of a (country, pool) pair. */
export function pairKey(country: string, pool: string): string {
  return `${country}/${pool}`;
}

/** The minute (since the epoch) an ISO instant falls in. */
export function minuteOf(iso: string): number {
  return Math.floor(Date.parse(iso) / 60_000);
}

function quantilesOf(row: ObservationRow | undefined): TtfbQuantiles | undefined {
  const t = row?.ttfb_ms;
  if (t?.p50 == null || t.p90 == null || t.p99 == null) return undefined;
  return { p50: t.p50, p90: t.p90, p99: t.p99 };
}

/**
 * Splits windows of 60, 120, … seconds (`windows[j]` is `window=60·(j+1)`) into the one-minute
 * buckets they are sums of: a window of S seconds is the current minute's bucket and the
 * S/60 − 1 before it (docs/reference.md §12), so bucket j is `windows[j] − windows[j−1]`. The
 * wider windows are read first: a flush that lands between two reads then shows in the narrower
 * one only, so an older minute can come out short (a difference below 0 counts 0), and the next
 * poll reads the rest; it never comes out over. `null` when the reads straddle a minute.
 */
export function splitMinutes(windows: readonly ObservationDocument[]): MinuteReading | null {
  const first = windows[0];
  if (!first) return null;
  const minute = minuteOf(first.until);
  if (windows.some((w) => minuteOf(w.until) !== minute)) return null;
  const byPair = windows.map((w) => new Map(w.rows.map((r) => [pairKey(r.country, r.pool), r])));
  const buckets = new Map<number, Map<string, MinuteCounts>>();
  byPair.forEach((rows, j) => {
    const narrower = j === 0 ? undefined : byPair[j - 1];
    const bucket = new Map<string, MinuteCounts>();
    for (const [key, row] of rows) {
      const less = narrower?.get(key);
      const outcomes: Record<string, number> = {};
      for (const [o, n] of Object.entries(row.outcomes)) {
        const d = n - (less?.outcomes[o] ?? 0);
        if (d > 0) outcomes[o] = d;
      }
      const requests = Math.max(0, row.requests - (less?.requests ?? 0));
      if (requests === 0 && Object.keys(outcomes).length === 0) continue;
      const q = quantilesOf(row);
      bucket.set(key, {
        country: row.country,
        pool: row.pool,
        requests,
        outcomes,
        starved: Math.max(0, row.starved - (less?.starved ?? 0)),
        failovers: Math.max(0, row.failovers - (less?.failovers ?? 0)),
        ...(q && j === 0 ? { quantiles: q } : {}),
        ...(q && j > 0 ? { windowQuantiles: q } : {}),
      });
    }
    buckets.set(minute - j, bucket);
  });
  return { minute, buckets };
}
