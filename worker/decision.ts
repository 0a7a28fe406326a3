import type { CompiledMap, DegradedReason, Route } from "../core/contract/compiled-map.js";
import { resolveRoute } from "../core/contract/resolve.js";
import type { HeldMap } from "./map-cache.js";
import { noMapRoute } from "./no-map-route.js";
import type { WorkerSettings } from "./settings.js";
import { splitRoute } from "./split.js";

/** What the edge decided for one request, before proxying. */
export interface RoutingDecision {
  readonly country: string;
  /** The map's `rev`, `null` without a map. */
  readonly rev: number | null;
  readonly route: Route;
  /** Degraded reasons in order of discovery: map state, then the route's own. */
  readonly degraded: readonly DegradedReason[];
}

const NONE: readonly DegradedReason[] = [];
const NO_MAP: readonly DegradedReason[] = ["no-map"];

function reasons(stale: boolean, route: Route): readonly DegradedReason[] {
  if (!stale) return route.degraded ? [route.degraded] : NONE;
  return route.degraded ? ["stale-map", route.degraded] : ["stale-map"];
}

const NO_VIEWER = () => "";

/**
 * Routes `country` with the map the isolate holds (the floor when there is none); a weighted
 * route puts the pool picked for the viewer first. `viewer` is called only for a weighted route
 * (it reads request headers).
 */
export function decide(
  held: HeldMap,
  country: string,
  settings: WorkerSettings,
  viewer: () => string = NO_VIEWER,
): RoutingDecision {
  const map: CompiledMap | null = held.map;
  if (!map) return { country, rev: null, route: noMapRoute(settings), degraded: NO_MAP };
  const own = resolveRoute(map, country);
  const route = own.weights ? splitRoute(own, viewer()) : own;
  return { country, rev: map.rev, route, degraded: reasons(held.stale, route) };
}
