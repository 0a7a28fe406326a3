import { createEdgeWorker } from "./edge-worker.js";
import { createMapCache } from "./map-cache.js";
import { OutlierEjection } from "./outlier-ejection.js";

export type { Env } from "./env.js";

/** The deployed Worker: one map cache and one outlier ejection per isolate, shared by all its requests. */
export default createEdgeWorker({ mapCache: createMapCache(), ejection: new OutlierEjection() });
