import type { CompiledMap } from "../core/contract/compiled-map.js";
import { supersedes } from "../core/contract/map-order.js";
import { parseMapShape } from "../core/contract/map-shape.js";

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
