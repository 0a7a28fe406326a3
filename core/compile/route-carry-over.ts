import type { Route } from "../contract/compiled-map.js";
import { jsonEqual } from "./json-equal.js";

/**
 * `route`, or `previous` when it holds the same data: a compile hands unchanged routes on as the
 * previous map's objects, so what is kept per route object (its JSON text, `routeText`) is
 * reused, and a change to one country costs that route's serialization, not the whole map's.
 */
export function carriedRoute(route: Route, previous: Route | undefined): Route {
  return previous !== undefined && jsonEqual(route, previous) ? previous : route;
}
