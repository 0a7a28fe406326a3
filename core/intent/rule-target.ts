import { type ContinentCode, isContinentCode } from "../contract/continents.js";
import { isRuleTarget } from "../contract/countries.js";

/** What a rule covers: one country (or `_default`), or a whole continent. */
export type RuleTarget =
  | { readonly kind: "country"; readonly cc: string }
  | { readonly kind: "continent"; readonly continent: ContinentCode };

/** The qualifier that makes a name a continent however it reads (`continent/NA`). */
export const CONTINENT_QUALIFIER = "continent/";

/**
 * Parses what follows `override/`, a desired-state `countries` key or a CLI argument. Four
 * continent codes are also ISO countries (`AF` Afghanistan, `AS` American Samoa, `NA` Namibia,
 * `SA` Saudi Arabia), so a bare two-letter code is a country whenever it is one; `AN`, `EU` and
 * `OC` are continents bare; `continent/K` names any continent unambiguously.
 */
export function parseRuleTarget(name: string): RuleTarget | undefined {
  if (isRuleTarget(name)) return { kind: "country", cc: name };
  if (isContinentCode(name)) return { kind: "continent", continent: name };
  if (name.startsWith(CONTINENT_QUALIFIER)) {
    const k = name.slice(CONTINENT_QUALIFIER.length);
    if (isContinentCode(k)) return { kind: "continent", continent: k };
  }
  return undefined;
}

/** The shortest unambiguous name of a target: `DE`, `EU`, `continent/NA`. */
export function ruleTargetName(t: RuleTarget): string {
  if (t.kind === "country") return t.cc;
  return isRuleTarget(t.continent) ? `${CONTINENT_QUALIFIER}${t.continent}` : t.continent;
}
