import { describe, expect, it } from "vitest";
import { ContinentOverrideKeys } from "../../../core/incremental/continent-override-keys.js";
import type { OverrideRule } from "../../../core/intent/schema.js";

const rule = (primary: string): OverrideRule => ({ primary, fallbacks: [] });

describe("ContinentOverrideKeys (continent overrides by continent, then by key)", () => {
  it("the greatest key of a continent wins; continents in the order of their first key", () => {
    const keys = new ContinentOverrideKeys();
    keys.set("OC", "override/OC", rule("syd-1"));
    keys.set("EU", "override/continent/EU", rule("fra-1"));
    keys.set("EU", "override/EU", rule("ams-1"));
    const resolved = keys.resolved();
    // EU's first key, override/EU, sorts before override/OC: set order does not matter.
    expect([...resolved.keys()]).toEqual(["EU", "OC"]);
    expect(resolved.get("EU")).toEqual({ key: "override/continent/EU", rule: rule("fra-1") });
    expect(resolved.get("OC")).toEqual({ key: "override/OC", rule: rule("syd-1") });
  });

  it("a deleted key hands the continent to the next one; the last key gone, the continent too", () => {
    const keys = new ContinentOverrideKeys();
    keys.set("EU", "override/EU", rule("ams-1"));
    keys.set("EU", "override/continent/EU", rule("fra-1"));
    keys.delete("EU", "override/continent/EU");
    expect(keys.resolved().get("EU")).toEqual({ key: "override/EU", rule: rule("ams-1") });
    keys.delete("EU", "override/EU");
    expect(keys.resolved().size).toBe(0);
    keys.set("OC", "override/OC", rule("syd-1"));
    keys.clear();
    expect(keys.resolved().size).toBe(0);
  });
});
