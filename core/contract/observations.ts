/**
 * How a viewer's request ended (docs/reference.md §12): `ok` 2xx/3xx (and 1xx), `client_error`
 * 4xx, `origin_error` an origin's 5xx, `timeout` and `unreachable` when no origin answered (the
 * edge's own 504 and 502), `edge_error` any other 5xx of the edge's own.
 */
export const OUTCOMES = [
  "ok",
  "client_error",
  "origin_error",
  "timeout",
  "unreachable",
  "edge_error",
] as const;

/** One of `OUTCOMES`. */
export type Outcome = (typeof OUTCOMES)[number];

/**
 * Where a proxied request's answer came from, as `X-Edge-Cache` says (docs/reference.md §14),
 * in lower case: the edge cache's copy (`hit`), an origin's answer the cache looked for first
 * (`miss`), an origin's answer the cache did not look for (`bypass`), or a stale copy served
 * because every pool failed (`stale`).
 */
export const CACHE_RESULTS = ["hit", "miss", "bypass", "stale"] as const;

/** One of `CACHE_RESULTS`. */
export type CacheResult = (typeof CACHE_RESULTS)[number];

/** The `pool` of requests no pool answered: the edge refused them before any origin. */
export const NO_POOL = "-";

/** `GET /__edge/observations`: `window` when absent, and its largest value, in seconds. */
export const OBSERVATION_WINDOW_S = { fallback: 60, max: 900 } as const;

/** One (country, pool) row of `GET /__edge/observations`. */
export interface ObservationRow {
  readonly country: string;
  /** The pool that answered, or `NO_POOL`. */
  readonly pool: string;
  /**
   * `{id}:canary` or `{id}:stable` for requests of a route a running canary changes
   * (`X-Edge-Canary`, docs/reference.md §13); absent for every other request.
   */
  readonly side?: string;
  /** Only with `by=minute`: the minute the row covers (ISO 8601, UTC). */
  readonly minute?: string;
  readonly requests: number;
  /** Every outcome, zero included. */
  readonly outcomes: Readonly<Record<Outcome, number>>;
  /**
   * Requests by edge cache result, zero included. Requests the edge answered before the cache
   * (a refusal, a loop, no route) count in none, so the four may sum to less than `requests`.
   */
  readonly cache: Readonly<Record<CacheResult, number>>;
  /** Requests that moved on from (or passed over) at least one pool. */
  readonly failovers: number;
  /** `null` when no origin answered any of the row's requests. */
  readonly ttfb_ms: {
    readonly p50: number | null;
    readonly p90: number | null;
    readonly p99: number | null;
  };
  /** The histogram behind `ttfb_ms`: one count per bound of `TTFB_BUCKETS_MS`, then the overflow. */
  readonly ttfb_counts: readonly number[];
  /** The milliseconds counted in `ttfb_counts`, summed. */
  readonly ttfb_sum_ms: number;
  /** Requests whose player reported buffer starvation (CMCD `bs`). */
  readonly starved: number;
  /** Requests whose player sent CMCD `bs` at all (starved or not). */
  readonly cmcd_requests: number;
  /** Median of the players' reported throughput (CMCD `mtp`, or steering throughput); `null` without any. */
  readonly throughput_kbps_p50: number | null;
}

/** The body of `GET /__edge/observations`. */
export interface ObservationsBody {
  readonly window_s: number;
  /** Start of the oldest one-minute bucket included (ISO 8601): the window rounds out to minutes. */
  readonly since: string;
  /** When the answer was made (ISO 8601). */
  readonly until: string;
  readonly rows: readonly ObservationRow[];
}
