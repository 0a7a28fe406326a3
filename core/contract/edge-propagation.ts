/**
 * How long Cloudflare says a KV write can take to be visible at every other location: "60
 * seconds or more". A lower bound of the real figure, not a promise.
 */
export const KV_PROPAGATION_SECONDS = 60;

/** The Worker's default `KV_CACHE_TTL`: KV's minimum `cacheTtl` (30 s), so no change waits longer than KV makes it. */
export const DEFAULT_KV_CACHE_TTL = 30;

/** The Worker's default `ISOLATE_CACHE_SECONDS`: how long an isolate keeps the parsed map. */
export const DEFAULT_ISOLATE_CACHE_SECONDS = 5;

/**
 * Seconds after the pusher writes `routes` within which an edge location may still serve the
 * previous map: KV's propagation, then a location's `cacheTtl` copy, then an isolate's parsed
 * copy (95 with the defaults). KV can take longer ("or more"): this is what to expect, not a bound.
 */
export function edgeSettleSeconds(
  kvCacheTtl: number = DEFAULT_KV_CACHE_TTL,
  isolateCacheSeconds: number = DEFAULT_ISOLATE_CACHE_SECONDS,
): number {
  return KV_PROPAGATION_SECONDS + kvCacheTtl + isolateCacheSeconds;
}
