import { workerdCacheStore } from "./cache/cache-store.js";
import { EdgeCache } from "./cache/edge-cache.js";
import { createEdgeWorker } from "./edge-worker.js";
import { createMapCache } from "./map-cache.js";
import { ViewerRecorder } from "./observe/recorder.js";
import { OutlierEjection } from "./outlier-ejection.js";

export type { Env } from "./env.js";
export { ObservationAggregator } from "./observe/aggregator.js";

/**
 * The deployed Worker: one map cache, one outlier ejection, one recorder of what viewers get
 * and one edge cache (over the location's Cache API) per isolate, shared by all its requests; and the aggregator the recorders flush to.
 */
export default createEdgeWorker({
  mapCache: createMapCache(),
  ejection: new OutlierEjection(),
  recorder: new ViewerRecorder(),
  cache: new EdgeCache(workerdCacheStore()),
});
