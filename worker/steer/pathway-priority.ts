import type { Route } from "../../core/contract/compiled-map.js";
import type { IsEjected } from "./pathway-pin.js";

/**
 * A viewer's pathway order (docs/reference.md §15): the route as the viewer takes it (the pool
 * its sticky key picks first, then the rest of the chain), without the pools the isolate has
 * ejected. The chain already holds only healthy pools inside the country's fence. When every pool
 * is ejected the whole chain is answered: a player must be given some pathway, and the edge's
 * request-time failover still guards each request.
 */
export function pathwayPriority(route: Route, isEjected: IsEjected): string[] {
  const order: string[] = [route.pool];
  const origins: string[] = [route.origin];
  for (const link of route.chain) {
    if (order.includes(link.pool)) continue;
    order.push(link.pool);
    origins.push(link.origin);
  }
  const usable = order.filter((_, i) => !isEjected(origins[i] ?? ""));
  return usable.length > 0 ? usable : order;
}
