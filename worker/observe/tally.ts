import { addCounts, bucketIndex } from "../../core/contract/histogram.js";
import { CACHE_RESULTS, OUTCOMES } from "../../core/contract/observations.js";
import { TTFB_BUCKETS_MS } from "../../core/contract/ttfb-buckets.js";
import { THROUGHPUT_BUCKETS_KBPS } from "./throughput-buckets.js";

/**
 * What the edge keeps of one (minute, country, pool): counts only, nothing about a viewer. The
 * isolate sums into it, the aggregator merges it, the endpoint reads it. Arrays are
 * per-bucket (not cumulative) counts: `outcomes` follows `OUTCOMES`, `cache` `CACHE_RESULTS`, `ttfb` the bounds of
 * `TTFB_BUCKETS_MS`, `throughput` those of `THROUGHPUT_BUCKETS_KBPS`, each plus an overflow.
 */
export interface Tally {
  requests: number;
  readonly outcomes: number[];
  readonly cache: number[];
  failovers: number;
  readonly ttfb: number[];
  /** Sum of the milliseconds counted in `ttfb` (a Prometheus histogram's `_sum`). */
  ttfbSumMs: number;
  starved: number;
  /** Requests whose player sent CMCD `bs`. */
  cmcd: number;
  readonly throughput: number[];
}

/** Array lengths of a `Tally`, which the aggregator checks a flushed one against. */
export const TALLY_LENGTHS = {
  outcomes: OUTCOMES.length,
  cache: CACHE_RESULTS.length,
  ttfb: TTFB_BUCKETS_MS.length + 1,
  throughput: THROUGHPUT_BUCKETS_KBPS.length + 1,
} as const;

/** A tally with nothing in it. */
export function emptyTally(): Tally {
  return {
    requests: 0,
    outcomes: new Array<number>(TALLY_LENGTHS.outcomes).fill(0),
    cache: new Array<number>(TALLY_LENGTHS.cache).fill(0),
    failovers: 0,
    ttfb: new Array<number>(TALLY_LENGTHS.ttfb).fill(0),
    ttfbSumMs: 0,
    starved: 0,
    cmcd: 0,
    throughput: new Array<number>(TALLY_LENGTHS.throughput).fill(0),
  };
}

/** One viewer request as the edge records it. */
export interface ViewerSample {
  /** Index into `OUTCOMES`. */
  readonly outcome: number;
  /** Index into `CACHE_RESULTS`; absent or `null` when the edge answered before the cache. */
  readonly cache?: number | null;
  readonly failover: boolean;
  /** Milliseconds to the answering origin's response headers; `null` when no origin answered. */
  readonly ttfbMs: number | null;
  /** CMCD `bs`; `null` when the player did not send it. */
  readonly starved: boolean | null;
  readonly throughputKbps: number | null;
}

/** Adds one request to `t`. */
export function addSample(t: Tally, s: ViewerSample): void {
  t.requests += 1;
  t.outcomes[s.outcome] = (t.outcomes[s.outcome] ?? 0) + 1;
  if (s.cache != null) t.cache[s.cache] = (t.cache[s.cache] ?? 0) + 1;
  if (s.failover) t.failovers += 1;
  if (s.ttfbMs !== null) {
    const i = bucketIndex(TTFB_BUCKETS_MS, s.ttfbMs);
    t.ttfb[i] = (t.ttfb[i] ?? 0) + 1;
    t.ttfbSumMs += s.ttfbMs;
  }
  if (s.starved !== null) {
    t.cmcd += 1;
    if (s.starved) t.starved += 1;
  }
  if (s.throughputKbps !== null) {
    const i = bucketIndex(THROUGHPUT_BUCKETS_KBPS, s.throughputKbps);
    t.throughput[i] = (t.throughput[i] ?? 0) + 1;
  }
}

/**
 * Adds `from` into `into`: tallies are sums, so any two merge exactly. A `from` without `cache`
 * (kept or flushed by an edge that did not count cache results) adds nothing there.
 */
export function mergeTally(into: Tally, from: Tally): void {
  into.requests += from.requests;
  addCounts(into.outcomes, from.outcomes);
  addCounts(into.cache, from.cache ?? []);
  into.failovers += from.failovers;
  addCounts(into.ttfb, from.ttfb);
  into.ttfbSumMs += from.ttfbSumMs;
  into.starved += from.starved;
  into.cmcd += from.cmcd;
  addCounts(into.throughput, from.throughput);
}
