import type { CompiledMap, MapCanary, Route } from "../contract/compiled-map.js";
import { resolveRoute } from "../contract/resolve.js";
import type { Canary } from "../intent/canary-schema.js";
import { routeText } from "./map-serialize.js";

const same = (a: Route, b: Route) => a === b || routeText(a) === routeText(b);

/**
 * The map's canary side (docs/reference.md §13): every route that differs between the stable
 * map and the canary's (`canaryMap`, compiled from the canary's intent under the same health,
 * sheds and fences), as the canary's viewers take it. `undefined` when the canary changes no
 * route under current health (every viewer then routes by the stable map, and says nothing of a
 * canary).
 */
export function canaryRoutes(
  stable: CompiledMap,
  canaryMap: CompiledMap,
  canary: Pick<Canary, "id" | "share">,
): MapCanary | undefined {
  const defaultMoves = !same(stable.default, canaryMap.default);
  const countries: Record<string, Route> = {};
  const ccs = new Set([...Object.keys(stable.countries), ...Object.keys(canaryMap.countries)]);
  for (const cc of [...ccs].sort()) {
    const after = resolveRoute(canaryMap, cc);
    const ownOnlyInCanary = !Object.hasOwn(stable.countries, cc);
    // A country the stable map routes by `default` would otherwise take the canary's default.
    if (!same(resolveRoute(stable, cc), after) || (defaultMoves && ownOnlyInCanary))
      countries[cc] = after;
  }
  if (!defaultMoves && Object.keys(countries).length === 0) return undefined;
  return {
    id: canary.id,
    share: canary.share,
    ...(defaultMoves ? { default: canaryMap.default } : {}),
    countries,
  };
}
