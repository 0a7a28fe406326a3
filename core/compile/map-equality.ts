import type { CompiledMap, PoolShed } from "../contract/compiled-map.js";
import { serializeMap } from "./map-serialize.js";

/** True when two maps are the same document apart from `compiled_at` (docs/reference.md §5.2). */
export function sameMap(a: CompiledMap, b: CompiledMap): boolean {
  return serializeMap({ ...a, compiled_at: "" }) === serializeMap({ ...b, compiled_at: "" });
}

/**
 * The map as stable JSON without what a new etcd revision changes on its own: `rev`, `epoch`,
 * `compiled_at` and each shed's `below_since`, viewer sheds' too (docs/reference.md §3). Two maps with the same
 * text route identically, report the same problems and carry the same `kept`, `sheds` and
 * `fences` for the next compile.
 */
export function routingText(map: CompiledMap): string {
  const base = { ...map, rev: 0, epoch: 0, compiled_at: "" };
  if (!map.sheds && !map.viewer_sheds) return serializeMap(base);
  const viewers = map.viewer_sheds;
  return serializeMap({
    ...base,
    ...(map.sheds ? { sheds: withoutClocks(map.sheds) } : {}),
    ...(viewers
      ? {
          viewer_sheds: Object.fromEntries(
            Object.entries(viewers).map(([cc, sheds]) => [cc, withoutClocks(sheds)]),
          ),
        }
      : {}),
  });
}

/** Each shed's share and last change, without its fall clock. */
function withoutClocks(sheds: Readonly<Record<string, PoolShed>>): Record<string, PoolShed> {
  const out: Record<string, PoolShed> = {};
  for (const [pool, s] of Object.entries(sheds)) out[pool] = { share: s.share, at: s.at };
  return out;
}

/**
 * True when two maps have the same {@link routingText}, whatever their `rev`: what the pusher
 * rewrites KV `routes` for, and what anti-entropy and `edgectl status` count as drift.
 */
export function sameRouting(a: CompiledMap, b: CompiledMap): boolean {
  return routingText(a) === routingText(b);
}
