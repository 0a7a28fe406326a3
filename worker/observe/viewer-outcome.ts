import {
  CACHE_RESULTS,
  type CacheResult,
  NO_POOL,
  OUTCOMES,
  type Outcome,
} from "../../core/contract/observations.js";
import { requestCountry } from "../country.js";
import { EDGE_HEADERS } from "../edge-headers.js";
import { isEdgeAnswer } from "../plain-response.js";
import { factsOf, type ResponseFacts } from "../response-facts.js";

/** What a viewer's request got, read from the edge's own response and its `X-Edge-*` headers. */
export interface ViewerOutcome {
  readonly country: string;
  /** The pool that answered (`X-Edge-Pool`), or `NO_POOL` when the edge refused before any. */
  readonly pool: string;
  /** `X-Edge-Canary` (`{id}:canary|stable`) when a canary changes the route, else `""`. */
  readonly side: string;
  /** Index into `OUTCOMES`. */
  readonly outcome: number;
  /** Index into `CACHE_RESULTS` of `X-Edge-Cache`; `null` when the edge answered before the cache. */
  readonly cache: number | null;
  readonly failover: boolean;
  /**
   * True when the response is an origin's, fetched for this request (its time to headers is a
   * TTFB sample); a copy from the edge cache (`X-Edge-Cache: HIT` or `STALE`) is not.
   */
  readonly originAnswered: boolean;
  /**
   * True when the request's wait is a TTFB sample: an origin answered it, or no origin sent
   * headers in time (the edge's 504: the wait is at least the origin timeout), so a pool slower
   * than the edge allows reads as slow, not only as failing.
   */
  readonly waitIsTtfb: boolean;
}

const INDEX = Object.fromEntries(OUTCOMES.map((o, i) => [o, i])) as Record<Outcome, number>;
const CACHE_INDEX = new Map<string, number>(
  CACHE_RESULTS.map((r: CacheResult, i) => [r.toUpperCase(), i]),
);

function edgeOutcome(status: number, pool: string | null): number {
  // The edge's 504 and 502 with a pool are its answers when no origin answered in time or at all.
  if (pool !== null && status === 504) return INDEX.timeout;
  if (pool !== null && status === 502) return INDEX.unreachable;
  return status >= 500 ? INDEX.edge_error : INDEX.client_error;
}

function originOutcome(status: number): number {
  if (status >= 500) return INDEX.origin_error;
  return status >= 400 ? INDEX.client_error : INDEX.ok;
}

/**
 * Classifies a proxied request by the response the edge returns: the country and pool the edge
 * put in `X-Edge-Country` and `X-Edge-Pool` (an origin's own `X-Edge-*` never get this far),
 * failover from `X-Edge-Failover`, and whether an origin or the edge itself answered.
 */
export function viewerOutcome(request: Request, response: Response): ViewerOutcome {
  const facts = factsOf(response) ?? factsFromHeaders(request, response.headers);
  const own = isEdgeAnswer(response);
  const pool = facts.pool === "" ? null : facts.pool;
  const outcome = own ? edgeOutcome(response.status, pool) : originOutcome(response.status);
  const originAnswered = !own && !FROM_CACHE.has(facts.cache);
  return {
    country: facts.country,
    pool: pool ?? NO_POOL,
    side: facts.side,
    outcome,
    cache: CACHE_INDEX.get(facts.cache) ?? null,
    failover: facts.failover,
    originAnswered,
    waitIsTtfb: originAnswered || outcome === INDEX.timeout,
  };
}

/** The facts of a response the edge kept none for, read from its headers (pool `""`: none). */
function factsFromHeaders(request: Request, h: Headers): ResponseFacts {
  return {
    pool: h.get(EDGE_HEADERS.pool) ?? "",
    country: h.get(EDGE_HEADERS.country) ?? requestCountry(request, false),
    side: h.get(EDGE_HEADERS.canary) ?? "",
    failover: h.has(EDGE_HEADERS.failover),
    cache: h.get(EDGE_HEADERS.cache) ?? "",
  };
}

const FROM_CACHE = new Set(["HIT", "STALE"]);

/** The outcome of a request whose handling threw (the edge answers it with its own 502). */
export function thrownOutcome(request: Request): ViewerOutcome {
  return {
    country: requestCountry(request, false),
    pool: NO_POOL,
    side: "",
    outcome: INDEX.edge_error,
    cache: null,
    failover: false,
    originAnswered: false,
    waitIsTtfb: false,
  };
}
