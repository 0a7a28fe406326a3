import { TTFB_BUCKETS_MS } from "../core/index.js";
import type { ObservationDocument } from "./observation-document.js";

/** What one (country, pool) got in one of the edge's one-minute buckets, so far. */
export interface MinuteCounts {
  readonly country: string;
  readonly pool: string;
  /** The canary side the row's requests took (`c12:canary`, `c12:stable`), or `""`. */
  readonly side: string;
  readonly requests: number;
  readonly outcomes: Readonly<Record<string, number>>;
  /** Requests by edge cache result (`hit`, `miss`, `bypass`, `stale`); absent or `{}`: none counted. */
  readonly cache?: Readonly<Record<string, number>>;
  readonly starved: number;
  readonly failovers: number;
  /** Time to first byte, one count per bucket of `TTFB_BUCKETS_MS` and the overflow. */
  readonly ttfb: readonly number[];
  /** The milliseconds counted in `ttfb`, summed. */
  readonly ttfbSumMs: number;
}

/** The edge's buckets by minute (ms since the epoch / 60,000), each by {@link rowKey}. */
export interface MinuteReading {
  /** The current minute: the one the answer's `until` falls in. */
  readonly minute: number;
  readonly buckets: ReadonlyMap<number, ReadonlyMap<string, MinuteCounts>>;
}

/** The key of a (country, pool) pair. */
export function pairKey(country: string, pool: string): string {
  return `${country}/${pool}`;
}

/**
 * The key of one row of a minute: its pair, and its canary side when it has one, so the two
 * sides of a canary's route never overwrite each other.
 */
export function rowKey(country: string, pool: string, side: string): string {
  return side === "" ? pairKey(country, pool) : `${pairKey(country, pool)}/${side}`;
}

/** The minute (since the epoch) an ISO instant falls in. */
export function minuteOf(iso: string): number {
  return Math.floor(Date.parse(iso) / 60_000);
}

/** Nothing counted yet: the start of every sum. */
export function emptyCounts(country: string, pool: string, side = ""): MinuteCounts {
  return {
    country,
    pool,
    side,
    requests: 0,
    outcomes: {},
    cache: {},
    starved: 0,
    failovers: 0,
    ttfb: new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0),
    ttfbSumMs: 0,
  };
}

/**
 * The edge's `by=minute` answer as one-minute buckets (docs/reference.md §12): each row is one
 * (minute, country, pool, canary side) with its raw counts, so nothing is derived; a minute's counts only grow
 * until its flushes are all in.
 */
export function minuteReading(doc: ObservationDocument): MinuteReading {
  const buckets = new Map<number, Map<string, MinuteCounts>>();
  for (const row of doc.rows) {
    const minute = minuteOf(row.minute);
    let bucket = buckets.get(minute);
    if (!bucket) {
      bucket = new Map();
      buckets.set(minute, bucket);
    }
    const side = row.side ?? "";
    bucket.set(rowKey(row.country, row.pool, side), {
      country: row.country,
      pool: row.pool,
      side,
      requests: row.requests,
      outcomes: row.outcomes,
      cache: row.cache ?? {},
      starved: row.starved,
      failovers: row.failovers,
      ttfb: row.ttfb_counts,
      ttfbSumMs: row.ttfb_sum_ms,
    });
  }
  return { minute: minuteOf(doc.until), buckets };
}
