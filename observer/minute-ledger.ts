import { TTFB_BUCKETS_MS } from "../core/index.js";
import type { MinuteCounts, MinuteReading } from "./minute-reading.js";

/** Minutes the edge keeps beyond the current one, and so the ledger: older ones no longer change. */
export const KEPT_MINUTES = 15;

/** What the observer has counted of one (country, pool) in one minute. */
export interface SeenCounts {
  requests: number;
  outcomes: Record<string, number>;
  /** Requests by cache result; absent in a state file written before the edge counted them. */
  cache?: Record<string, number>;
  starved: number;
  failovers: number;
  /** TTFB counts already added to the histogram, by bucket of `TTFB_BUCKETS_MS`. */
  ttfb: number[];
  ttfbSumMs: number;
}

/** What to add to the counters for one (country, pool). */
export interface CounterIncrement {
  readonly country: string;
  readonly pool: string;
  readonly outcomes: Readonly<Record<string, number>>;
  /** Requests by cache result (`hit`, `miss`, `bypass`, `stale`) gained. */
  readonly cache: Readonly<Record<string, number>>;
  readonly starved: number;
  readonly failovers: number;
  /** TTFB counts by bucket of `TTFB_BUCKETS_MS` (the last over 30 s), and their seconds. */
  readonly ttfb: readonly number[];
  readonly ttfbSeconds: number;
}

/** The result of one reading. */
export interface LedgerTake {
  readonly increments: readonly CounterIncrement[];
  /** Pairs whose minute holds fewer requests than already counted: the edge lost its sums. */
  readonly resets: number;
}

/** The ledger as the state file keeps it. */
export interface LedgerJson {
  readonly minutes: readonly (readonly [number, readonly (readonly [string, SeenCounts])[]])[];
}

const zeroSeen = (): SeenCounts => ({
  requests: 0,
  outcomes: {},
  cache: {},
  starved: 0,
  failovers: 0,
  ttfb: new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0),
  ttfbSumMs: 0,
});

/**
 * What has been counted of each of the edge's one-minute buckets, so that counters grow by
 * exactly what each bucket gained since it was last read, however often a bucket is read
 * (every poll re-reads the previous minute, where late flushes land), and across restarts: of
 * the edge (a minute below what was counted lost its sums: what it holds now is new), and of
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
      if (minute < reading.minute - KEPT_MINUTES) continue;
      let seenMinute = this.minutes.get(minute);
      if (!seenMinute) {
        seenMinute = new Map();
        this.minutes.set(minute, seenMinute);
      }
      for (const [key, now] of bucket) {
        let seen = seenMinute.get(key);
        if (!seen || now.requests < seen.requests) {
          if (seen) resets++;
          seen = zeroSeen();
          seenMinute.set(key, seen);
        }
        const inc = advance(seen, now);
        if (!baseline && inc) increments.push(inc);
      }
    }
    for (const m of this.minutes.keys())
      if (m < reading.minute - KEPT_MINUTES) this.minutes.delete(m);
    return { increments, resets: baseline ? 0 : resets };
  }

  /**
   * The pairs (`CC/pool`) with a row in a minute the ledger still keeps: those the edge still
   * holds. A pair without requests for longer than the edge keeps its minutes is not among them.
   */
  pairs(): Set<string> {
    const out = new Set<string>();
    for (const rows of this.minutes.values())
      for (const key of rows.keys()) out.add(key.split("/", 2).join("/"));
    return out;
  }

  toJSON(): LedgerJson {
    return { minutes: [...this.minutes].map(([m, pairs]) => [m, [...pairs]] as const) };
  }

  /** A ledger from the state file's copy. */
  static fromJSON(json: LedgerJson): MinuteLedger {
    const l = new MinuteLedger();
    for (const [m, pairs] of json.minutes)
      l.minutes.set(
        m,
        new Map(
          pairs.map(([k, v]) => [
            k,
            { ...v, outcomes: { ...v.outcomes }, cache: { ...v.cache }, ttfb: [...v.ttfb] },
          ]),
        ),
      );
    return l;
  }
}

/** The part of `now` above `seen`; a count never goes down. */
const gain = (now: number, seen: number) => Math.max(0, now - seen);

/** Moves each of `seen`'s labelled counts up to `now`'s and returns the gains (none: `{}`). */
function gains(
  seen: Record<string, number>,
  now: Readonly<Record<string, number>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(now)) {
    const d = gain(n, seen[k] ?? 0);
    if (d > 0) {
      out[k] = d;
      seen[k] = n;
    }
  }
  return out;
}

/** Moves `seen` up to `now` and returns the counters' gain, or null when nothing grew. */
function advance(seen: SeenCounts, now: MinuteCounts): CounterIncrement | null {
  const outcomes = gains(seen.outcomes, now.outcomes);
  seen.cache ??= {};
  const cache = gains(seen.cache, now.cache ?? {});
  let grew = Object.keys(outcomes).length > 0 || Object.keys(cache).length > 0;
  const ttfb = now.ttfb.map((n, i) => gain(n, seen.ttfb[i] ?? 0));
  ttfb.forEach((d, i) => {
    if (d > 0) {
      seen.ttfb[i] = (seen.ttfb[i] ?? 0) + d;
      grew = true;
    }
  });
  const ttfbMs = gain(now.ttfbSumMs, seen.ttfbSumMs);
  const starved = gain(now.starved, seen.starved);
  const failovers = gain(now.failovers, seen.failovers);
  seen.requests = Math.max(seen.requests, now.requests);
  seen.ttfbSumMs += ttfbMs;
  seen.starved += starved;
  seen.failovers += failovers;
  if (!grew && starved === 0 && failovers === 0 && ttfbMs === 0) return null;
  return {
    country: now.country,
    pool: now.pool,
    outcomes,
    cache,
    starved,
    failovers,
    ttfb,
    ttfbSeconds: ttfbMs / 1000,
  };
}
