import type { KeptRule, Route } from "../contract/compiled-map.js";
import { DEFAULT_CC } from "../contract/countries.js";
import { positiveWeights, weightsOf } from "../contract/rule-weights.js";
import { type CountryRule, CountryRuleSchema } from "../intent/schema.js";
import { VALUE_FREE } from "../intent/value-free-issue.js";
import type { CarriedState } from "./carried-state.js";

/** The pools of a rule in chain order: primary, then fallbacks. */
export function rulePools(rule: KeptRule): string[] {
  return [rule.primary, ...rule.fallbacks];
}

/** A map read back from KV may come from anywhere: only a well-formed rule is trusted. */
function checked(
  primary: unknown,
  fallbacks: unknown,
  weights: unknown = undefined,
  attrs: unknown = undefined,
): CountryRule | undefined {
  const raw = {
    primary,
    fallbacks,
    ...(weights === undefined ? {} : { weights }),
    ...(attrs === undefined ? {} : { attrs }),
  };
  const r = CountryRuleSchema.safeParse(raw, VALUE_FREE);
  return r.success ? r.data : undefined;
}

/** A route's rule read back off it: its chain, and its weights when it has any. */
function ruleOffRoute(route: Route): CountryRule | undefined {
  const [first, ...rest] = route.chain.map((c) => c.pool);
  return checked(first, rest, route.weights ? weightsOf(route.weights) : undefined);
}

/**
 * The last valid `country/{cc}` rule a previous map knows (docs/reference.md §3.4): its `kept` entry, else the
 * rule its route shows whole. A map omits `kept` for a country only when the route is the rule's
 * full chain (source `country/{cc}`, not degraded, every pool healthy), so the chain is the rule.
 * (Maps from pushers that predate `kept` only have routes: their chain is the best there is.)
 */
export function lastValidRule(previous: CarriedState | null, cc: string): CountryRule | undefined {
  if (!previous) return undefined;
  const kept = keptRule(previous, cc);
  if (kept) return kept;
  const route =
    cc === DEFAULT_CC
      ? previous.default
      : Object.hasOwn(previous.countries, cc)
        ? previous.countries[cc]
        : undefined;
  if (!route || route.source !== `country/${cc}` || route.degraded !== null) return undefined;
  return ruleOffRoute(route);
}

/** The `kept` entry under `key` (`DE`, `_default` or `continent/EU`), checked again. */
function keptRule(previous: CarriedState, key: string): CountryRule | undefined {
  const kept = previous.kept;
  if (!kept || !Object.hasOwn(kept, key)) return undefined;
  const rule = kept[key];
  return rule ? checked(rule.primary, rule.fallbacks, rule.weights, rule.attrs) : undefined;
}

/**
 * The last valid `continent/{k}` rule a previous map knows: `kept["continent/K"]`, else the rule
 * a country compiled from it shows whole (it is kept otherwise).
 */
export function lastValidContinentRule(
  previous: CarriedState | null,
  k: string,
): CountryRule | undefined {
  if (!previous) return undefined;
  const key = `continent/${k}`;
  const kept = keptRule(previous, key);
  if (kept) return kept;
  for (const route of Object.values(previous.countries)) {
    if (route.source === key && route.degraded === null) return ruleOffRoute(route);
  }
  return undefined;
}

/** True when `route` is `rule`'s full chain: the next compile can read the rule off the route. */
export function routeShowsRule(route: Route, rule: KeptRule, cc: string): boolean {
  return routeShowsRuleOf(route, rule, `country/${cc}`);
}

/** `routeShowsRule` for any deciding key (`country/DE`, `continent/EU`), weights included. */
export function routeShowsRuleOf(route: Route, rule: KeptRule, source: string): boolean {
  // A shed rewrites the weights: the rule is no longer on the route.
  if (route.source !== source || route.degraded !== null || route.shed) return false;
  // A route carries merged attrs, never the rule's own: a rule with attrs is always kept.
  if (rule.attrs && Object.keys(rule.attrs).length > 0) return false;
  const { chain } = route;
  if (chain.length !== rule.fallbacks.length + 1 || chain[0]?.pool !== rule.primary) return false;
  if (!rule.fallbacks.every((p, i) => chain[i + 1]?.pool === p)) return false;
  const want = positiveWeights(rule);
  const have = route.weights ?? [];
  return (
    want.length === have.length &&
    want.every((w, i) => have[i]?.pool === w.pool && have[i]?.weight === w.weight)
  );
}
