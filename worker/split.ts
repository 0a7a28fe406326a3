import type { ChainLink, Route } from "../core/compiled-map.js";
import { pickWeighted } from "../core/rendezvous.js";

/**
 * A weighted route as one viewer takes it (SPEC §4.3): the pool weighted rendezvous hashing
 * picks for `key` goes first, the rest of the chain keeps its failover order. Only weighted pools
 * that are in the chain count (a map from elsewhere may disagree with itself). An unweighted
 * route is returned as it is.
 */
export function splitRoute(route: Route, key: string): Route {
  const weights = route.weights;
  if (!weights || weights.length === 0) return route;
  const inChain = weights.filter((w) => route.chain.some((c) => c.pool === w.pool));
  const picked = pickWeighted(key, inChain);
  if (picked === undefined || picked === route.pool) return route;
  const first = route.chain.find((c) => c.pool === picked);
  if (!first) return route;
  const chain: ChainLink[] = [first, ...route.chain.filter((c) => c.pool !== picked)];
  return { ...route, pool: first.pool, origin: first.origin, chain };
}
