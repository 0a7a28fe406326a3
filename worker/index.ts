import { createApp } from "./app.js";
import { createMapCache } from "./map-cache.js";
import { OutlierEjection } from "./outlier-ejection.js";

export type { Env } from "./env.js";

/** The deployed Worker: one map cache and one outlier ejection per isolate, shared by all its requests. */
export default createApp({ mapCache: createMapCache(), ejection: new OutlierEjection() });
