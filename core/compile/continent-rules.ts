import type { KeptRule, Route } from "../contract/compiled-map.js";
import { CONTINENT_CODES, type ContinentCode, countriesOf } from "../contract/continents.js";
import type { ContinentOverrideRule, ContinentRule } from "../incremental/country-inputs.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { CountryRule, OverrideRule } from "../intent/schema.js";
import type { CarriedState } from "./carried-state.js";
import { lastValidContinentRule, routeShowsRuleOf } from "./last-valid-rule.js";
import { keptOf } from "./rule-route.js";

/** An override whose `expires_at` has passed is ignored (docs/reference.md §2), whatever its lease says. */
export function liveOverride(rule: OverrideRule | undefined, now: Date): OverrideRule | undefined {
  if (!rule?.expires_at) return rule;
  return Date.parse(rule.expires_at) > now.getTime() ? rule : undefined;
}

/**
 * Each continent's rule (valid now, else its last valid one from `previous`) and its live,
 * usable override. `usable` is compile's check (every pool defined), which reports problems.
 */
export function continentRules(
  state: RoutingState,
  previous: CarriedState | null,
  now: Date,
  usable: (key: string, rule: CountryRule | undefined) => CountryRule | undefined,
): {
  rules: Map<ContinentCode, ContinentRule>;
  overrides: Map<ContinentCode, ContinentOverrideRule>;
} {
  const rules = new Map<ContinentCode, ContinentRule>();
  const overrides = new Map<ContinentCode, ContinentOverrideRule>();
  for (const k of CONTINENT_CODES) {
    const rule = usable(`continent/${k}`, state.continents.get(k));
    if (rule) rules.set(k, { rule, valid: true });
    else if (state.continents.has(k) || state.invalidContinents.has(k)) {
      const last = lastValidContinentRule(previous, k);
      if (last) rules.set(k, { rule: last, valid: false });
    }
    const o = state.continentOverrides.get(k);
    const live = liveOverride(o?.rule, now);
    const ok = o && live ? usable(o.key, live) : undefined;
    if (o && ok) overrides.set(k, { key: o.key, rule: ok });
  }
  return { rules, overrides };
}

/**
 * The continent rules no country's route shows whole (the rule is invalid now, hidden by country
 * rules, or its pools are unhealthy), by `continent/K`: the map keeps them for the next compile.
 */
export function unshownContinentRules(
  rules: ReadonlyMap<ContinentCode, ContinentRule>,
  countries: Readonly<Record<string, Route>>,
): Record<string, KeptRule> {
  const out: Record<string, KeptRule> = {};
  for (const [k, c] of rules) {
    const source = `continent/${k}`;
    const shown =
      c.valid &&
      countriesOf(k).some((cc) => {
        const r = countries[cc];
        return r !== undefined && routeShowsRuleOf(r, c.rule, source);
      });
    if (!shown) out[source] = keptOf(c.rule);
  }
  return out;
}
