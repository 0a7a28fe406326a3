import { describe, expect, it } from "vitest";
import { continentRules } from "../../../core/compile/continent-rules.js";
import { countryInputsOf, sameCountryInputs } from "../../../core/incremental/country-inputs.js";
import { decodeSnapshot } from "../../../core/index.js";
import { opts, P, snap, world } from "../../helpers/snapshot.js";

describe("countryInputsOf", () => {
  it("takes a country's rules, flags and continent as the state and the compile hold them", () => {
    const state = decodeSnapshot(
      snap(
        world({
          "override/DE": { primary: "ams-1", fallbacks: [] },
          "country/AT": "{",
          "continent/EU": { primary: "par-1", fallbacks: [] },
          "override/continent/EU": { primary: "fra-1", fallbacks: [] },
        }),
      ),
      P,
    );
    const { rules, overrides } = continentRules(state, null, opts().now, (_k, r) => r);
    const de = countryInputsOf("DE", state, rules, overrides);
    expect(de.own).toBe(state.countries.get("DE"));
    expect(de.override).toBe(state.overrides.get("DE"));
    expect(de.continent).toBe(rules.get("EU")?.rule);
    expect(de.continentValid).toBe(true);
    expect(de.continentOverride).toBe(overrides.get("EU")?.rule);
    expect(de.continentOverrideKey).toBe("override/continent/EU");
    const at = countryInputsOf("AT", state, rules, overrides);
    expect([at.own, at.ownInvalid, at.overrideInvalid]).toEqual([undefined, true, false]);
    expect(sameCountryInputs(de, countryInputsOf("DE", state, rules, overrides))).toBe(true);
    expect(sameCountryInputs(de, at)).toBe(false);
    // A country outside every continent table (the default) has no continent inputs.
    const dflt = countryInputsOf("_default", state, rules, overrides);
    expect([dflt.continent, dflt.continentOverride]).toEqual([undefined, undefined]);
  });
});
