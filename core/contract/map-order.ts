import type { CompiledMap } from "./compiled-map.js";

/** The fields that order maps: etcd history first, then revision within it. */
export type MapPosition = Pick<CompiledMap, "history" | "rev">;

/** True when map `a` comes strictly after map `b`. */
export function isAfter(a: MapPosition, b: MapPosition): boolean {
  return a.history > b.history || (a.history === b.history && a.rev > b.rev);
}

/**
 * True when `next` may replace `held`: a higher history whatever its revision (etcd was
 * replaced or restored and the pushers followed it), never a lower history, and within one
 * history never a lower revision. Clocks play no part: `compiled_at` can be wrong or equal.
 */
export function supersedes(next: MapPosition, held: MapPosition): boolean {
  if (next.history !== held.history) return next.history > held.history;
  return next.rev >= held.rev;
}
