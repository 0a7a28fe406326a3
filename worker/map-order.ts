import type { CompiledMap } from "../core/contract/compiled-map.js";
import { parseMapShape } from "../core/contract/map-shape.js";

/** The fields that order maps: etcd history first, then revision within it. */
export type MapPosition = Pick<CompiledMap, "history" | "rev">;

/**
 * True when `next` may replace `held`: a higher history whatever its revision (etcd was
 * replaced or restored and the pushers followed it), never a lower history, and within one
 * history never a lower revision. Clocks play no part: `compiled_at` can be wrong or equal.
 */
export function supersedes(next: MapPosition, held: MapPosition): boolean {
  if (next.history !== held.history) return next.history > held.history;
  return next.rev >= held.rev;
}

/** What a `routes` document read from KV means for the map an isolate holds. */
export type MapVerdict =
  | { readonly kind: "newer"; readonly map: CompiledMap }
  | { readonly kind: "older" }
  | { readonly kind: "malformed" };

/**
 * Parses and validates a `routes` document and orders it against the held map: the whole cost
 * of taking a new map (measured in `npm run bench` as `worker.map_refresh_ms`).
 */
export function judgeMapText(text: string, held: CompiledMap | null): MapVerdict {
  const map = parseMapShape(text);
  if (!map) return { kind: "malformed" };
  if (held && !supersedes(map, held)) return { kind: "older" };
  return { kind: "newer", map };
}
