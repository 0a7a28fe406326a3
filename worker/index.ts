import { createApp } from "./app.js";
import { createMapCache } from "./map-cache.js";

export type { Env } from "./env.js";

/** The deployed Worker: one map cache per isolate, shared by all its requests. */
export default createApp({ mapCache: createMapCache() });
