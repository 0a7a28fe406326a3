import { workerdCacheStore } from "../../worker/cache/cache-store.js";
import { EdgeCache } from "../../worker/cache/edge-cache.js";
import { createEdgeWorker } from "../../worker/edge-worker.js";
import { createMapCache } from "../../worker/map-cache.js";
import { OutlierEjection } from "../../worker/outlier-ejection.js";

/** How long a "slow" cache takes to answer a lookup or a store. */
const SLOW_CACHE_MS = 3000;

/**
 * The deployed Worker over a location cache that misbehaves by path: under `/slow/` every
 * lookup and store answers after `SLOW_CACHE_MS`; under `/error/` each throws; under `/hang/`
 * they never answer. Anywhere else it is the real `caches.default`. The fault suite and the
 * cache tests run it in workerd (it lives beside the bench's other Worker entries, typed as Worker code) to show the cache never fails or holds up a request.
 */
function faultyStore() {
  const real = workerdCacheStore();
  const fault = (key: string) =>
    key.includes("/slow/")
      ? "slow"
      : key.includes("/error/")
        ? "error"
        : key.includes("/hang/")
          ? "hang"
          : null;
  const misbehave = async <T>(key: string, op: () => Promise<T>): Promise<T> => {
    const f = fault(key);
    if (f === "error") throw new Error("cache unavailable");
    if (f === "hang") return new Promise<T>(() => {});
    if (f === "slow") await new Promise((r) => setTimeout(r, SLOW_CACHE_MS));
    return op();
  };
  return {
    match: (key: string, range: string | null) => misbehave(key, () => real.match(key, range)),
    put: (key: string, response: Response) => misbehave(key, () => real.put(key, response)),
    delete: (key: string) => misbehave(key, () => real.delete(key)),
  };
}

export default createEdgeWorker({
  mapCache: createMapCache(),
  ejection: new OutlierEjection(),
  cache: new EdgeCache(faultyStore()),
});
