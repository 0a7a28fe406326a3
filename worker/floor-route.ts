import type { Route } from "../core/contract/compiled-map.js";
import type { WorkerSettings } from "./settings.js";

const floors = new WeakMap<WorkerSettings, Route>();

/** The route used when the isolate has no map at all: `FLOOR_POOL` at its templated origin. */
export function floorRoute(settings: WorkerSettings): Route {
  let route = floors.get(settings);
  if (!route) {
    const pool = settings.floorPool;
    const origin = settings.originTemplate.replaceAll("{pool}", pool);
    route = { pool, origin, chain: [{ pool, origin }], source: "floor", degraded: null };
    floors.set(settings, route);
  }
  return route;
}
