import type { KeptRule } from "../contract/compiled-map.js";
import { type ContinentCode, continentOf } from "../contract/continents.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { CountryRule } from "../intent/schema.js";

/** A continent's rule as compile walks it: valid now, or its last valid one. */
export interface ContinentRule {
  readonly rule: CountryRule;
  readonly valid: boolean;
}

/** A continent's live override and the key it came from (its route's `source`). */
export interface ContinentOverrideRule {
  readonly key: string;
  readonly rule: CountryRule;
}

/**
 * What decides one unfenced country's route besides the pools, their reports, the shed shares
 * and the route settings, each as the object the state holds (a `RoutingIndex` keeps a key's rule
 * object while the key is unchanged).
 */
export interface CountryInputs {
  readonly own: KeptRule | undefined;
  readonly ownInvalid: boolean;
  readonly override: KeptRule | undefined;
  readonly overrideInvalid: boolean;
  /** The continent's rule and override as compile walks them (`continentRules`). */
  readonly continent: KeptRule | undefined;
  readonly continentValid: boolean;
  readonly continentOverride: KeptRule | undefined;
  readonly continentOverrideKey: string | undefined;
}

/** The inputs of `cc` in `state`, with the continent rules and overrides of the same compile. */
export function countryInputsOf(
  cc: string,
  state: RoutingState,
  rules: ReadonlyMap<ContinentCode, ContinentRule>,
  overrides: ReadonlyMap<ContinentCode, ContinentOverrideRule>,
): CountryInputs {
  const k = continentOf(cc);
  const c = k ? rules.get(k) : undefined;
  const o = k ? overrides.get(k) : undefined;
  return {
    own: state.countries.get(cc),
    ownInvalid: state.invalidCountries.has(cc),
    override: state.overrides.get(cc),
    overrideInvalid: state.invalidOverrides.has(cc),
    continent: c?.rule,
    continentValid: c?.valid ?? false,
    continentOverride: o?.rule,
    continentOverrideKey: o?.key,
  };
}

/** Whether two countries' inputs are the same objects. */
export function sameCountryInputs(a: CountryInputs, b: CountryInputs): boolean {
  return (
    a.own === b.own &&
    a.ownInvalid === b.ownInvalid &&
    a.override === b.override &&
    a.overrideInvalid === b.overrideInvalid &&
    a.continent === b.continent &&
    a.continentValid === b.continentValid &&
    a.continentOverride === b.continentOverride &&
    a.continentOverrideKey === b.continentOverrideKey
  );
}
