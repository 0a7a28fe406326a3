import type { CompiledMap, KeptRule, Route } from "./compiled-map.js";
import { DEFAULT_CC } from "./countries.js";
import { type CountryRule, CountryRuleSchema } from "./schema.js";
import { VALUE_FREE } from "./value-free-issue.js";

/** The pools of a rule in chain order: primary, then fallbacks. */
export function rulePools(rule: KeptRule): string[] {
  return [rule.primary, ...rule.fallbacks];
}

/** A map read back from KV may come from anywhere: only a well-formed rule is trusted. */
function checked(primary: unknown, fallbacks: unknown): CountryRule | undefined {
  const r = CountryRuleSchema.safeParse({ primary, fallbacks }, VALUE_FREE);
  return r.success ? r.data : undefined;
}

/**
 * The last valid `country/{cc}` rule a previous map knows (SPEC §3.4): its `kept` entry, else the
 * rule its route shows whole. A map omits `kept` for a country only when the route is the rule's
 * full chain (source `country/{cc}`, not degraded, every pool healthy), so the chain is the rule.
 * (Maps from pushers that predate `kept` only have routes: their chain is the best there is.)
 */
export function lastValidRule(previous: CompiledMap | null, cc: string): CountryRule | undefined {
  if (!previous) return undefined;
  const kept = previous.kept;
  if (kept && Object.hasOwn(kept, cc)) {
    const rule = kept[cc];
    if (rule) return checked(rule.primary, rule.fallbacks);
  }
  const route =
    cc === DEFAULT_CC
      ? previous.default
      : Object.hasOwn(previous.countries, cc)
        ? previous.countries[cc]
        : undefined;
  if (!route || route.source !== `country/${cc}` || route.degraded !== null) return undefined;
  const [first, ...rest] = route.chain.map((c) => c.pool);
  return checked(first, rest);
}

/** True when `route` is `rule`'s full chain: the next compile can read the rule off the route. */
export function routeShowsRule(route: Route, rule: KeptRule, cc: string): boolean {
  if (route.source !== `country/${cc}` || route.degraded !== null) return false;
  const pools = rulePools(rule);
  return route.chain.length === pools.length && route.chain.every((c, i) => c.pool === pools[i]);
}
