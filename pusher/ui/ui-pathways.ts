import { type CompiledMap, type Route, splitPathwayOrders } from "../../core/index.js";

/** One share of a route's viewers and the pathway order a steering manifest gives them. */
export interface UiPathwayShare {
  /** The pool their sticky keys pick first. */
  readonly pool: string;
  /** Its weight in the route's split; 100 for a route without one (or one share left of it). */
  readonly weight: number;
  /** The pools in the order players get them (`PATHWAY-PRIORITY`). */
  readonly order: readonly string[];
}

/**
 * Countries whose viewers get the same pathway orders (docs/reference.md §15). `shares` is empty
 * when the route's fence holds no pool: the steering server answers those viewers 503.
 */
export interface UiPathwayGroup {
  readonly shares: readonly UiPathwayShare[];
  /** `_default` (its countries without a route of their own follow it) and countries, sorted. */
  readonly countries: readonly string[];
}

function sharesOf(route: Route): UiPathwayShare[] {
  if (route.degraded === "fence-unsatisfiable") return [];
  // The pusher sees no isolate's ejections: the orders are the map's, every pool usable.
  const shares = splitPathwayOrders(route);
  // One share left of a split is the whole route: grouped with unsplit routes of that order.
  return shares.map((s) => ({
    pool: s.pool,
    weight: shares.length === 1 ? 100 : s.weight,
    order: [...s.order],
  }));
}

/**
 * The pathway orders of every route of the map, countries with the same orders grouped:
 * `_default`'s group first (it holds every country without a route of its own), then the group
 * of most countries. They are what `/__edge/steer/hls` and `/dash` answer a viewer of each
 * (its chain holds only healthy pools inside its fence).
 */
export function toUiPathways(map: CompiledMap): UiPathwayGroup[] {
  const groups = new Map<string, { shares: UiPathwayShare[]; countries: string[] }>();
  const add = (cc: string, route: Route) => {
    const shares = sharesOf(route);
    const key = JSON.stringify(shares);
    const group = groups.get(key);
    if (group) group.countries.push(cc);
    else groups.set(key, { shares, countries: [cc] });
  };
  add("_default", map.default);
  for (const cc of Object.keys(map.countries).sort()) {
    const route = map.countries[cc];
    if (route) add(cc, route);
  }
  const rest = [...groups.values()];
  const first = rest.shift();
  rest.sort(
    (a, b) =>
      b.countries.length - a.countries.length ||
      ((a.countries[0] ?? "") < (b.countries[0] ?? "") ? -1 : 1),
  );
  return first ? [first, ...rest] : rest;
}
