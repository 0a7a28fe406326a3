import type { ChainLink, Route, RouteWeight } from "../core/contract/compiled-map.js";
import { pickWeighted } from "../core/contract/rendezvous.js";
import { formatSplit } from "../core/contract/rule-weights.js";

/** What a weighted route's split needs, worked out once per route of a map. */
interface SplitPlan {
  /** The weights whose pools are in the chain: the only ones that can be picked. */
  readonly weights: readonly RouteWeight[];
  /** The route as each picked pool takes it (pick first, the rest in failover order). */
  readonly byPick: Map<string, Route>;
}

// Keyed by the map's own route objects: a new map brings new routes, and the old plans go
// with the old map. The hot path then only hashes the viewer key; it allocates nothing.
const plans = new WeakMap<Route, SplitPlan>();
const splitTexts = new WeakMap<readonly RouteWeight[], string>();

function planOf(route: Route, weights: readonly RouteWeight[]): SplitPlan {
  let plan = plans.get(route);
  if (!plan) {
    const inChain = weights.filter((w) => route.chain.some((c) => c.pool === w.pool));
    plan = { weights: inChain, byPick: new Map() };
    plans.set(route, plan);
  }
  return plan;
}

function reordered(route: Route, first: ChainLink): Route {
  const chain: ChainLink[] = [first, ...route.chain.filter((c) => c.pool !== first.pool)];
  return { ...route, pool: first.pool, origin: first.origin, chain };
}

/**
 * A weighted route as one viewer takes it (docs/reference.md §4.3): the pool weighted rendezvous hashing
 * picks for `key` goes first, the rest of the chain keeps its failover order. Only weighted pools
 * that are in the chain count (a map from elsewhere may disagree with itself). An unweighted
 * route is returned as it is; so is one whose pick is its own pool.
 */
export function splitRoute(route: Route, key: string): Route {
  const weights = route.weights;
  if (!weights || weights.length === 0) return route;
  const plan = planOf(route, weights);
  const picked = pickWeighted(key, plan.weights);
  if (picked === undefined || picked === route.pool) return route;
  let taken = plan.byPick.get(picked);
  if (!taken) {
    const first = route.chain.find((c) => c.pool === picked);
    if (!first) return route;
    taken = reordered(route, first);
    plan.byPick.set(picked, taken);
  }
  return taken;
}

/** `X-Edge-Split` for a route's weights (`fra-1:80,ams-1:20`), computed once per map route. */
export function splitHeader(weights: readonly RouteWeight[]): string {
  let text = splitTexts.get(weights);
  if (text === undefined) {
    text = formatSplit(weights);
    splitTexts.set(weights, text);
  }
  return text;
}
