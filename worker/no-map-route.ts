import type { Route } from "../core/contract/compiled-map.js";
import { floorRouteAt } from "../core/contract/floor-route.js";
import type { WorkerSettings } from "./settings.js";

const floors = new WeakMap<WorkerSettings, Route>();

/** The route used when the isolate has no map at all: `FLOOR_POOL` at its templated origin. */
export function noMapRoute(settings: WorkerSettings): Route {
  let route = floors.get(settings);
  if (!route) {
    const pool = settings.floorPool;
    route = floorRouteAt(pool, settings.originTemplate.replaceAll("{pool}", pool), null);
    floors.set(settings, route);
  }
  return route;
}
