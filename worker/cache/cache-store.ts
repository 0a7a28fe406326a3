/**
 * The part of the Cache API the edge cache uses, keyed by URL: `caches.default` in the deployed
 * Worker (`workerdCacheStore`); a test Worker may wrap it (slow or failing) to show that the
 * cache never fails a request.
 */
export interface CacheStore {
  /** The stored copy under `key`; with `range`, the Cache API answers that range (206) from it. */
  match(key: string, range: string | null): Promise<Response | undefined>;
  put(key: string, response: Response): Promise<void>;
  /** True when a copy was there. */
  delete(key: string): Promise<boolean>;
}

/** `caches.default`, the location's cache (per Cloudflare location, not tiered). */
export function workerdCacheStore(): CacheStore {
  const cache = () => (caches as unknown as { default: Cache }).default;
  return {
    match: (key, range) =>
      cache().match(range === null ? key : new Request(key, { headers: { Range: range } })),
    put: (key, response) => cache().put(key, response),
    delete: (key) => cache().delete(key),
  };
}
