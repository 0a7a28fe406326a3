import type { Route } from "./compiled-map.js";

/** Whether an origin is passed over as ejected (docs/reference.md §4): the isolate's view. */
export type IsEjected = (origin: string) => boolean;

const NONE_EJECTED: IsEjected = () => false;

/**
 * A viewer's pathway order (docs/reference.md §15): the route as the viewer takes it (the pool
 * its sticky key picks first, then the rest of the chain), without the pools whose origin
 * `isEjected`. The chain already holds only healthy pools inside the country's fence. When every
 * pool is ejected the whole chain is answered: a player must be given some pathway, and the
 * edge's request-time failover still guards each request. The Worker, `edgectl explain` and the
 * pusher's `/ui` all order pathways with this.
 */
export function pathwayOrder(route: Route, isEjected: IsEjected = NONE_EJECTED): string[] {
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

/** One share of a weighted route's viewers and the pathway order they get. */
export interface SplitPathwayOrder {
  /** The pool their sticky keys pick first. */
  readonly pool: string;
  /** Its weight in the route's split (docs/reference.md §4.3). */
  readonly weight: number;
  readonly order: readonly string[];
}

/**
 * Every pathway order a country's viewers get (docs/reference.md §15): one per weighted pool of
 * the chain (the viewers whose key picks it, that pool first, the rest of the chain after it), or
 * a single share of the route's own order when it has no split. This is what `edgectl explain`
 * and `/ui` show; the Worker computes one viewer's with {@link pathwayOrder}.
 */
export function splitPathwayOrders(
  route: Route,
  isEjected: IsEjected = NONE_EJECTED,
): SplitPathwayOrder[] {
  const weights = (route.weights ?? []).filter((w) => route.chain.some((c) => c.pool === w.pool));
  if (weights.length === 0)
    return [{ pool: route.pool, weight: 100, order: pathwayOrder(route, isEjected) }];
  return weights.map((w) => {
    const first = route.chain.find((c) => c.pool === w.pool) ?? route.chain[0];
    const picked: Route = first
      ? {
          ...route,
          pool: first.pool,
          origin: first.origin,
          chain: [first, ...route.chain.filter((c) => c.pool !== first.pool)],
        }
      : route;
    return { pool: w.pool, weight: w.weight, order: pathwayOrder(picked, isEjected) };
  });
}
