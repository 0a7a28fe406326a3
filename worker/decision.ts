import { canaryRouteOf, onCanarySide } from "../core/contract/canary-side.js";
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
  /** `X-Edge-Canary` (`{id}:canary` or `{id}:stable`) when a canary changes this route. */
  readonly canary?: string;
}

const NONE: readonly DegradedReason[] = [];
const NO_MAP: readonly DegradedReason[] = ["no-map"];

function reasons(stale: boolean, route: Route): readonly DegradedReason[] {
  if (!stale) return route.degraded ? [route.degraded] : NONE;
  return route.degraded ? ["stale-map", route.degraded] : ["stale-map"];
}

const NO_VIEWER = () => "";

/**
 * Routes `country` with the map the isolate holds (the floor when there is none); a route a
 * canary changes takes the canary's side for the canary's share of viewers (docs/reference.md
 * §13), and a weighted route puts the pool picked for the viewer first. `viewer` is called only
 * for a weighted route or one a canary changes (it reads request headers).
 */
export function decide(
  held: HeldMap,
  country: string,
  settings: WorkerSettings,
  viewer: () => string = NO_VIEWER,
): RoutingDecision {
  const map: CompiledMap | null = held.map;
  if (!map) return { country, rev: null, route: noMapRoute(settings), degraded: NO_MAP };
  const stable = resolveRoute(map, country);
  const canary = map.canary ? canaryRouteOf(map, country) : undefined;
  if (!canary || !map.canary) {
    const route = stable.weights ? splitRoute(stable, viewer()) : stable;
    return { country, rev: map.rev, route, degraded: reasons(held.stale, route) };
  }
  const key = viewer();
  const onCanary = onCanarySide(map.canary, key);
  const own = onCanary ? canary : stable;
  const route = own.weights ? splitRoute(own, key) : own;
  return {
    country,
    rev: map.rev,
    route,
    degraded: reasons(held.stale, route),
    canary: `${map.canary.id}:${onCanary ? "canary" : "stable"}`,
  };
}
