import { countries as packageCountries } from "countries-list";
import { describe, expect, it } from "vitest";
import { CONTINENT_CORRECTIONS } from "../../../core/contract/continent-corrections.js";
import {
  CONTINENT_CODES,
  COUNTRY_CODES,
  continentOf,
  countriesOf,
  parseRuleTarget,
  ruleTargetName,
} from "../../../core/index.js";

const iso = [...COUNTRY_CODES].filter((cc) => cc !== "XX" && cc !== "T1");
const pkg = packageCountries as Record<string, { continent: string } | undefined>;

describe("country → continent table (from countries-list)", () => {
  it("maps every ISO 3166-1 country to exactly one of Cloudflare's seven continents", () => {
    for (const cc of iso) {
      const k = continentOf(cc);
      expect(k, cc).toBeDefined();
      expect(CONTINENT_CODES).toContain(k);
      const holders = CONTINENT_CODES.filter((c) => countriesOf(c).includes(cc));
      expect(holders, cc).toEqual([k]);
    }
    const total = CONTINENT_CODES.reduce((n, k) => n + countriesOf(k).length, 0);
    expect(total).toBe(iso.length);
  });

  it("is the countries-list data, except the documented corrections", () => {
    for (const cc of iso) {
      const want = CONTINENT_CORRECTIONS[cc] ?? pkg[cc]?.continent;
      expect(continentOf(cc), cc).toBe(want);
    }
    // The corrections are real differences, not leftovers.
    for (const [cc, k] of Object.entries(CONTINENT_CORRECTIONS))
      expect(pkg[cc]?.continent).not.toBe(k);
  });

  it("agrees with GeoNames/MaxMind on the countries that straddle continents", () => {
    expect(continentOf("RU")).toBe("EU");
    expect(continentOf("TR")).toBe("AS");
    expect(continentOf("EG")).toBe("AF");
    expect(continentOf("PA")).toBe("NA");
    expect(continentOf("CY")).toBe("EU");
    expect(continentOf("KZ")).toBe("AS");
    expect(continentOf("GL")).toBe("NA");
    expect(continentOf("AQ")).toBe("AN");
  });

  it("gives XX (unknown), T1 (Tor) and _default no continent", () => {
    expect(continentOf("XX")).toBeUndefined();
    expect(continentOf("T1")).toBeUndefined();
    expect(continentOf("_default")).toBeUndefined();
  });
});

describe("rule targets: countries win over continent codes", () => {
  it.each([
    ["DE", { kind: "country", cc: "DE" }, "DE"],
    ["_default", { kind: "country", cc: "_default" }, "_default"],
    ["NA", { kind: "country", cc: "NA" }, "NA"],
    ["SA", { kind: "country", cc: "SA" }, "SA"],
    ["EU", { kind: "continent", continent: "EU" }, "EU"],
    ["OC", { kind: "continent", continent: "OC" }, "OC"],
    ["continent/NA", { kind: "continent", continent: "NA" }, "continent/NA"],
    ["continent/EU", { kind: "continent", continent: "EU" }, "EU"],
  ] as const)("%s", (name, target, canonical) => {
    expect(parseRuleTarget(name)).toEqual(target);
    expect(ruleTargetName(target)).toBe(canonical);
  });
  it.each(["ZZ", "eu", "continent/ZZ", "continent/", "EU/DE"])("%s is no target", (name) => {
    expect(parseRuleTarget(name)).toBeUndefined();
  });
});
