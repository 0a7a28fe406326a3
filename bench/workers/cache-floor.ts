/** Bindings of the cache-floor Worker. */
interface FloorEnv {
  readonly ORIGIN: string;
}

/**
 * The floor of a cache HIT in this workerd: `caches.default.match` of the request's URL, and
 * nothing else (no map, no key, no edge headers); a miss fetches from `ORIGIN` and stores it.
 * What a HIT costs beyond this is the edge cache's own.
 */
export default {
  async fetch(request: Request, env: FloorEnv, ctx: ExecutionContext): Promise<Response> {
    const cache = (caches as unknown as { default: Cache }).default;
    const hit = await cache.match(request.url);
    if (hit) return hit;
    const url = new URL(request.url);
    const origin = await fetch(`${env.ORIGIN}${url.pathname}`);
    ctx.waitUntil(cache.put(request.url, origin.clone()));
    return origin;
  },
};
