import type { CompiledMap, MapCanary, Route } from "./compiled-map.js";
import { viewerPoolHash01 } from "./rendezvous.js";

/** Which side of a canary a response came from (`X-Edge-Canary: {id}:{side}`). */
export type CanarySide = "canary" | "stable";

/**
 * True when the viewer with rendezvous key `key` is among the `share` percent of a canary's
 * viewers: the same hash as a weighted split's, of the viewer and the canary id, so a viewer stays
 * on one side for the canary's life and each canary draws its own viewers.
 */
export function onCanarySide(canary: Pick<MapCanary, "id" | "share">, key: string): boolean {
  return viewerPoolHash01(key, `canary/${canary.id}`) * 100 < canary.share;
}

/**
 * The canary side of the route `cc` takes, or `undefined` when the canary leaves it alone: its
 * own canary route, else (a country without its own stable route) the canary's `default`.
 */
export function canaryRouteOf(map: CompiledMap, cc: string): Route | undefined {
  const canary = map.canary;
  if (!canary) return undefined;
  if (Object.hasOwn(canary.countries, cc)) return canary.countries[cc];
  return Object.hasOwn(map.countries, cc) ? undefined : canary.default;
}
