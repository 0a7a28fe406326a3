import type { DegradedReason, Route } from "./compiled-map.js";

/**
 * The one-link route to the floor pool (`FLOOR_POOL`) at `origin`: what the compile resolves a
 * country to when no rule's pool can take it (`degraded` says why), and what the Worker serves
 * before it has read any map (`degraded` null).
 */
export function floorRouteAt(pool: string, origin: string, degraded: DegradedReason | null): Route {
  return { pool, origin, chain: [{ pool, origin }], source: "floor", degraded };
}
