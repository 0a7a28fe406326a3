import { describe, expect, it } from "vitest";
import {
  isCountryCode,
  isPoolName,
  isRuleTarget,
  parseKey,
  routingKeys,
} from "../../../core/index.js";

describe("parseKey", () => {
  it.each([
    ["country/DE", { kind: "country", cc: "DE" }],
    ["country/_default", { kind: "country", cc: "_default" }],
    ["country/XX", { kind: "country", cc: "XX" }],
    ["country/T1", { kind: "country", cc: "T1" }],
    ["override/FR", { kind: "override", cc: "FR" }],
    ["override/_default", { kind: "override", cc: "_default" }],
    ["pool/fra-1", { kind: "pool", pool: "fra-1" }],
    ["health/ams-1", { kind: "health", pool: "ams-1" }],
    ["epoch", { kind: "epoch" }],
    ["lock/apply", { kind: "lock" }],
    ["something", { kind: "unknown" }],
    ["misc/thing", { kind: "unknown" }],
  ])("%s", (key, expected) => {
    expect(parseKey(key)).toEqual(expected);
  });

  it.each([
    "country/ZZ",
    "country/de",
    "country/DEU",
    "country/",
    "override/Q1",
    "pool/Fra-1",
    "pool/-fra",
    "pool/fra-",
    "pool/fra_1",
    `pool/${"a".repeat(64)}`,
    "health/",
  ])("%s is an invalid key", (key) => {
    expect(parseKey(key).kind).toBe("invalid");
  });

  it("names the bad part in the reason", () => {
    const k = parseKey("country/ZZ");
    expect(k.kind === "invalid" && k.reason).toContain("ISO 3166-1 alpha-2");
  });
});

describe("names", () => {
  it("accepts DNS labels up to 63 characters", () => {
    expect(isPoolName("a")).toBe(true);
    expect(isPoolName("a".repeat(63))).toBe(true);
    expect(isPoolName("a".repeat(64))).toBe(false);
    expect(isPoolName("")).toBe(false);
  });
  it("knows ISO codes, XX and T1, and _default only as a rule target", () => {
    expect(isCountryCode("US")).toBe(true);
    expect(isCountryCode("XX")).toBe(true);
    expect(isCountryCode("T1")).toBe(true);
    expect(isCountryCode("ZZ")).toBe(false);
    expect(isCountryCode("_default")).toBe(false);
    expect(isRuleTarget("_default")).toBe(true);
  });
  it("builds keys under a prefix", () => {
    const k = routingKeys("/p/");
    expect(k.country("DE")).toBe("/p/country/DE");
    expect(k.override("DE")).toBe("/p/override/DE");
    expect(k.health("fra-1")).toBe("/p/health/fra-1");
    expect(k.epoch).toBe("/p/epoch");
    expect(k.lock).toBe("/p/lock/apply");
  });
});
