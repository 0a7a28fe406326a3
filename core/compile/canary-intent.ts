import type { ContinentCode } from "../contract/continents.js";
import type { Canary } from "../intent/canary-schema.js";
import { CANARY_KEY, parseKey } from "../intent/keys.js";
import { type Problem, problem } from "../intent/problem.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { CountryRule, PoolDef } from "../intent/schema.js";
import { decodeFor } from "../intent/value-decode.js";

/** The canary's intent decoded, or the problem that keeps every viewer on the stable side. */
export type CanaryIntent =
  | { readonly ok: true; readonly state: RoutingState }
  | { readonly ok: false; readonly problem: Problem };

/**
 * The routing state the canary's viewers route by (docs/reference.md §13): `state` with the
 * canary's changes to `pool/`, `country/` and `continent/` keys applied, and no canary. Health,
 * overrides and fences are the stable side's: a canary never changes a fence. A change whose
 * value does not decode makes the whole canary void (a problem on `canary/current`): half a
 * change is never routed.
 */
export function canaryIntent(state: RoutingState, canary: Canary): CanaryIntent {
  const countries = new Map(state.countries);
  const invalidCountries = new Set(state.invalidCountries);
  const continents = new Map(state.continents);
  const invalidContinents = new Set(state.invalidContinents);
  const pools = new Map(state.pools);
  for (const change of canary.changes) {
    const parsed = parseKey(change.key);
    const decoded = change.after === null ? null : decodeFor(parsed, change.after);
    if (decoded && !decoded.ok) {
      return {
        ok: false,
        problem: problem(
          CANARY_KEY,
          "invalid-value",
          `change to ${change.key}: ${decoded.message} (no canary: every viewer routes by the stable intent)`,
        ),
      };
    }
    const value = decoded?.value;
    switch (parsed.kind) {
      case "country":
        invalidCountries.delete(parsed.cc);
        if (value === undefined) countries.delete(parsed.cc);
        else countries.set(parsed.cc, value as CountryRule);
        break;
      case "continent":
        invalidContinents.delete(parsed.continent);
        if (value === undefined) continents.delete(parsed.continent);
        else continents.set(parsed.continent as ContinentCode, value as CountryRule);
        break;
      case "pool":
        if (value === undefined) pools.delete(parsed.pool);
        else pools.set(parsed.pool, value as PoolDef);
        break;
      default:
        return {
          ok: false,
          problem: problem(
            CANARY_KEY,
            "invalid-value",
            `change to ${change.key}: a canary changes only pool/, country/ and continent/ keys (no canary: every viewer routes by the stable intent)`,
          ),
        };
    }
  }
  const { canary: _, ...stable } = state;
  return {
    ok: true,
    state: {
      ...stable,
      countries: sorted(countries),
      invalidCountries,
      continents: sorted(continents),
      invalidContinents,
      pools: sorted(pools),
    },
  };
}

function sorted<K extends string, V>(m: Map<K, V>): Map<K, V> {
  return new Map([...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}
