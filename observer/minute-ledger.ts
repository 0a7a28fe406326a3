import type { MinuteCounts, MinuteReading } from "./minute-buckets.js";
import { TTFB_OUTCOMES } from "./observation-document.js";
import {
  bucketCounts,
  estimatedSumSeconds,
  reconcileBuckets,
  TTFB_BOUNDS_S,
  type TtfbQuantiles,
} from "./ttfb-buckets.js";

/** Minutes the edge keeps, and so the ledger: older buckets can no longer change. */
export const KEPT_MINUTES = 15;

/** What the observer has counted of one (country, pool) in one minute. */
export interface SeenCounts {
  requests: number;
  outcomes: Record<string, number>;
  starved: number;
  failovers: number;
  quantiles?: TtfbQuantiles;
  /** TTFB counts already added to the histogram, by bucket. */
  emitted: number[];
}

/** What to add to the counters for one (country, pool). */
export interface CounterIncrement {
  readonly country: string;
  readonly pool: string;
  readonly outcomes: Readonly<Record<string, number>>;
  readonly starved: number;
  readonly failovers: number;
  /** TTFB counts by bucket (the last over 30 s), and their estimated seconds. */
  readonly ttfb: readonly number[];
  readonly ttfbSeconds: number;
}

/** The result of one reading. */
export interface LedgerTake {
  readonly increments: readonly CounterIncrement[];
  /** Pairs whose current minute holds fewer requests than already counted: the edge restarted. */
  readonly resets: number;
}

/** The ledger as the state file keeps it. */
export interface LedgerJson {
  readonly minutes: readonly (readonly [number, readonly (readonly [string, SeenCounts])[]])[];
}

const zeroSeen = (): SeenCounts => ({
  requests: 0,
  outcomes: {},
  starved: 0,
  failovers: 0,
  emitted: new Array<number>(TTFB_BOUNDS_S.length + 1).fill(0),
});

/**
 * What has been counted of each of the edge's one-minute buckets, so that counters grow by
 * exactly what each bucket gained since it was last read, however often a bucket is read
 * (every poll re-reads the current and the previous minute), and across restarts: of the edge
 * (its current minute starts again below what was counted: what it holds now is new), and of
 * the observer (the state file brings the ledger back, so nothing is counted twice and the
 * minutes it missed are read from the edge's 15).
 */
export class MinuteLedger {
  private readonly minutes = new Map<number, Map<string, SeenCounts>>();

  /** The newest minute read, or null before the first reading. */
  get lastMinute(): number | null {
    let last: number | null = null;
    for (const m of this.minutes.keys()) if (last === null || m > last) last = m;
    return last;
  }

  /**
   * Records a reading and returns what the counters gain. With `baseline`, the reading is
   * recorded as counted and nothing is returned: what the edge held before the observer first
   * read it was counted by no one, and counting it at once would show as a burst.
   */
  take(reading: MinuteReading, baseline = false): LedgerTake {
    const increments: CounterIncrement[] = [];
    let resets = 0;
    for (const [minute, bucket] of reading.buckets) {
      if (minute <= reading.minute - KEPT_MINUTES) continue;
      let seenMinute = this.minutes.get(minute);
      if (!seenMinute) {
        seenMinute = new Map();
        this.minutes.set(minute, seenMinute);
      }
      for (const [key, now] of bucket) {
        let seen = seenMinute.get(key);
        if (!seen) {
          seen = zeroSeen();
          seenMinute.set(key, seen);
        } else if (minute === reading.minute && now.requests < seen.requests) {
          seen = zeroSeen();
          seenMinute.set(key, seen);
          resets++;
        }
        const inc = advance(seen, now, minute === reading.minute);
        if (!baseline && inc) increments.push(inc);
      }
    }
    for (const m of this.minutes.keys())
      if (m <= reading.minute - KEPT_MINUTES) this.minutes.delete(m);
    return { increments, resets: baseline ? 0 : resets };
  }

  toJSON(): LedgerJson {
    return { minutes: [...this.minutes].map(([m, pairs]) => [m, [...pairs]] as const) };
  }

  /** A ledger from the state file's copy. */
  static fromJSON(json: LedgerJson): MinuteLedger {
    const l = new MinuteLedger();
    for (const [m, pairs] of json.minutes)
      l.minutes.set(m, new Map(pairs.map(([k, v]) => [k, { ...v }])));
    return l;
  }
}

/** Moves `seen` up to `now` and returns the counters' gain, or null when nothing grew. */
function advance(seen: SeenCounts, now: MinuteCounts, current: boolean): CounterIncrement | null {
  const outcomes: Record<string, number> = {};
  let grew = false;
  for (const [o, n] of Object.entries(now.outcomes)) {
    const d = n - (seen.outcomes[o] ?? 0);
    if (d > 0) {
      outcomes[o] = d;
      seen.outcomes[o] = n;
      grew = true;
    }
  }
  seen.requests = Math.max(seen.requests, now.requests);
  const starved = Math.max(0, now.starved - seen.starved);
  const failovers = Math.max(0, now.failovers - seen.failovers);
  seen.starved += starved;
  seen.failovers += failovers;
  if (current && now.quantiles) seen.quantiles = now.quantiles;
  const q = seen.quantiles ?? now.windowQuantiles;
  let ttfb = new Array<number>(TTFB_BOUNDS_S.length + 1).fill(0);
  let ttfbSeconds = 0;
  const withTtfb = TTFB_OUTCOMES.reduce((a, o) => a + (seen.outcomes[o] ?? 0), 0);
  const emitted = seen.emitted.reduce((a, b) => a + b, 0);
  if (q && withTtfb > emitted) {
    ttfb = reconcileBuckets(seen.emitted, bucketCounts(withTtfb, q));
    ttfb.forEach((n, i) => {
      seen.emitted[i] = (seen.emitted[i] ?? 0) + n;
    });
    ttfbSeconds = estimatedSumSeconds(withTtfb - emitted, q);
  }
  if (!grew && starved === 0 && failovers === 0 && ttfbSeconds === 0) return null;
  return {
    country: now.country,
    pool: now.pool,
    outcomes,
    starved,
    failovers,
    ttfb,
    ttfbSeconds,
  };
}
