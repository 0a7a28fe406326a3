import {
  type CompileResult,
  continentOf,
  DEFAULT_CC,
  type RuleTarget,
  resolveRoute,
} from "../../core/index.js";

/**
 * Why the route the edge serves for `target` depends on KV's `routes` map (the pusher's previous
 * compile), or `null` when etcd alone decides it. `now` is the compile without that map.
 *
 * - An invalid rule the target may be routed by (its own, `_default`, or its continent's): the
 *   pusher routes by the last valid rule, which only the map keeps.
 * - A pool with `slow_ms` on the target's route: the share it sheds steps down from the one in
 *   the map (docs/reference.md §9), so the map decides how many viewers it keeps.
 */
export function kvDependence(now: CompileResult, target: RuleTarget): string | null {
  const ruleKeys =
    target.kind === "continent"
      ? [`continent/${target.continent}`]
      : [`country/${target.cc}`, `country/${DEFAULT_CC}`, ...continentKey(target.cc)];
  const invalid = now.problems.find((p) => ruleKeys.includes(p.key));
  if (invalid)
    return `${invalid.key} is invalid, and the edge routes by its last valid rule, which only KV's routes map keeps`;
  const slow = routePools(now, target).find((p) => now.state.pools.get(p)?.slow_ms !== undefined);
  if (slow !== undefined)
    return `pool ${slow} has slow_ms, and the share of viewers it sheds steps down from the one in KV's routes map`;
  return null;
}

function continentKey(cc: string): string[] {
  const k = continentOf(cc);
  return k ? [`continent/${k}`] : [];
}

/** The pools of the target's route as etcd alone compiles it (a continent: every slow-capable pool). */
function routePools(now: CompileResult, target: RuleTarget): string[] {
  if (target.kind === "continent") return [...now.state.pools.keys()];
  const route = target.cc === DEFAULT_CC ? now.map.default : resolveRoute(now.map, target.cc);
  return route.chain.map((link) => link.pool);
}
