import type { ChainLink, Route } from "../../core/contract/compiled-map.js";
import type { IsEjected } from "../../core/contract/pathway-order.js";

/**
 * The route pinned to `pool` (docs/reference.md §15): that pool first, the rest of the chain in
 * its failover order. `null` when the pin is refused: the pool is not in the route's chain (which
 * holds only healthy pools inside the country's fence), or the isolate has it ejected.
 */
export function pinnedRoute(route: Route, pool: string, isEjected: IsEjected): Route | null {
  const link = route.chain.find((c) => c.pool === pool);
  if (!link || isEjected(link.origin)) return null;
  if (route.pool === pool) return route;
  const chain: ChainLink[] = [link, ...route.chain.filter((c) => c.pool !== pool)];
  return { ...route, pool: link.pool, origin: link.origin, chain };
}
