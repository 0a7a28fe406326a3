import { DEFAULT_CC } from "../../../core/contract/countries.js";
import type { UiMap, UiPool, UiRoute } from "../ui-document.js";
import type { PoolColour } from "./palette.js";

/** One row of the country directory embedded in the page. */
export interface DirectoryEntry {
  readonly cc: string;
  readonly name: string;
  readonly search: string;
}

/** How a country routes now: its own route, or the default one (`onDefault`). */
export interface CountryRoute {
  readonly route: UiRoute;
  readonly onDefault: boolean;
}

/** The Worker's lookup (docs/reference.md §4.3): `countries[cc] ?? default`. */
export function routeFor(map: UiMap, cc: string): CountryRoute {
  if (cc === DEFAULT_CC) return { route: map.default, onDefault: false };
  const own = map.countries[cc];
  return own ? { route: own, onDefault: false } : { route: map.default, onDefault: true };
}

/** Neutral fill for a pool the page has no colour for (never expected: every pool is listed). */
export const UNKNOWN_FILL = "#59606b";

/** The fill of a country: its pool's colour, muted when it is on `_default`. */
export function fillFor(r: CountryRoute, colours: ReadonlyMap<string, PoolColour>): string {
  const c = colours.get(r.route.pool);
  if (!c) return UNKNOWN_FILL;
  return r.onDefault ? c.muted : c.colour;
}

/** How many countries (directory rows, `_default` excluded) each pool serves now. */
export function poolCounts(map: UiMap, codes: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const cc of codes) {
    if (cc === DEFAULT_CC) continue;
    const pool = routeFor(map, cc).route.pool;
    counts.set(pool, (counts.get(pool) ?? 0) + 1);
  }
  return counts;
}

/** A pool's legend entry, or a "missing" stand-in for a pool the map names but does not list. */
export function poolInfo(map: UiMap, name: string): UiPool {
  return map.pools.find((p) => p.name === name) ?? { name, health: "missing", defined: false };
}

/** Human text for a degraded reason. */
export function degradedText(reason: string | null): string {
  if (reason === null) return "no";
  if (reason === "all-pools-unhealthy")
    return "all-pools-unhealthy (no healthy pool in its rule: floor)";
  if (reason === "no-default-rule") return "no-default-rule (no usable _default: floor)";
  if (reason === "all-pools-slow")
    return "all-pools-slow (every pool of its chain fully shed: nothing shed)";
  return reason;
}
