import type { ChainLink, DegradedReason, KeptRule, Route } from "../contract/compiled-map.js";
import { floorRouteAt } from "../contract/floor-route.js";
import type { RouteSettings } from "../contract/route-settings.js";
import { shedRoute } from "../contract/route-shed.js";
import { positiveWeights } from "../contract/rule-weights.js";
import { type Problem, problem } from "../intent/problem.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { CountryRule } from "../intent/schema.js";
import { rulePools } from "./last-valid-rule.js";

/** The origin of a pool: its `pool/` definition, else the template. */
export function originFor(
  pool: string,
  state: Pick<RoutingState, "pools">,
  originTemplate: string,
): string {
  return (
    state.pools.get(pool)?.origin.replace(/\/$/, "") ?? originTemplate.replaceAll("{pool}", pool)
  );
}

function danglingPools(rule: CountryRule, state: RoutingState): string[] {
  // Called for every rule of every compile: no array unless a pool is missing.
  if (state.pools.has(rule.primary) && rule.fallbacks.every((p) => state.pools.has(p))) return [];
  return [rule.primary, ...rule.fallbacks].filter((p) => !state.pools.has(p));
}

/** The floor pool's one-link route (`FLOOR_POOL`), degraded for `degraded`. */
export function floorRoute(
  state: RoutingState,
  opts: RouteSettings,
  degraded: DegradedReason,
): Route {
  return floorRouteAt(
    opts.floorPool,
    originFor(opts.floorPool, state, opts.originTemplate),
    degraded,
  );
}

/**
 * The route of a rule: its healthy chain, and its weights over the healthy weighted pools, with
 * `shares` shed (those of `byViewers` marked as the country's viewers' shed).
 */
export function routeFromRule(
  rule: KeptRule,
  source: string,
  state: RoutingState,
  opts: RouteSettings,
  shares: ReadonlyMap<string, number>,
  byViewers?: ReadonlySet<string>,
): Route {
  const healthy = (p: string) => state.pools.has(p) && state.health.get(p)?.status === "healthy";
  const chain: ChainLink[] = rulePools(rule)
    .filter(healthy)
    .map((pool) => ({ pool, origin: originFor(pool, state, opts.originTemplate) }));
  const first = chain[0];
  if (!first) return floorRoute(state, opts, "all-pools-unhealthy");
  const weights = positiveWeights(rule).filter((w) => healthy(w.pool));
  const route: Route = { pool: first.pool, origin: first.origin, chain, source, degraded: null };
  return shedRoute(weights.length > 0 ? { ...route, weights } : route, shares, byViewers);
}

/** A kept rule as the map stores it: weights and attrs only when the rule has them. */
export function keptOf(rule: CountryRule): KeptRule {
  const base: KeptRule = { primary: rule.primary, fallbacks: [...rule.fallbacks] };
  const weighted = rule.weights ? { ...base, weights: { ...rule.weights } } : base;
  return rule.attrs ? { ...weighted, attrs: { ...rule.attrs } } : weighted;
}

/** `route` with `attrs` when there are any. */
export function withAttrs(route: Route, attrs: Route["attrs"]): Route {
  return attrs ? { ...route, attrs } : route;
}

/** A rule is usable when every pool it names is defined. */
export function usableRule(
  key: string,
  rule: CountryRule | undefined,
  state: RoutingState,
  problems: Problem[],
): CountryRule | undefined {
  if (!rule) return undefined;
  const missing = danglingPools(rule, state);
  if (missing.length === 0) return rule;
  // The names passed the schema's DNS-label check: safe to show, and what the operator needs.
  const named = missing.slice(0, 3).map((p) => `"${p}"`);
  if (missing.length > 3) named.push(`${missing.length - 3} more`);
  const s = missing.length > 1 ? "s" : "";
  problems.push(problem(key, "dangling-reference", `names undefined pool${s} ${named.join(", ")}`));
  return undefined;
}
