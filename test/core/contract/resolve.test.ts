import { describe, expect, it } from "vitest";
import { compile, normalizeCountry, parseDuration, resolveRoute } from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

describe("normalizeCountry", () => {
  it.each([
    ["DE", "DE"],
    ["de", "DE"],
    ["T1", "T1"],
    ["XX", "XX"],
    ["", "XX"],
    ["DEU", "XX"],
    ["1A", "XX"],
    [undefined, "XX"],
    [42, "XX"],
    ["D\u00c9", "XX"],
  ])("%j → %s", (raw, cc) => {
    expect(normalizeCountry(raw)).toBe(cc);
  });
});

describe("resolveRoute", () => {
  const map = compile(snap(world()), opts()).map;
  it("uses the country's route, else the default", () => {
    expect(resolveRoute(map, "DE").pool).toBe("fra-1");
    expect(resolveRoute(map, "FR")).toBe(map.default);
    expect(resolveRoute(map, "constructor")).toBe(map.default);
    expect(resolveRoute(map, "__proto__")).toBe(map.default);
  });
});

describe("parseDuration", () => {
  it.each([
    ["30s", 30],
    ["15m", 900],
    ["6h", 21600],
    ["1d", 86400],
    ["45", 45],
    ["0s", null],
    ["-5s", null],
    ["6 hours", null],
    ["", null],
    ["1.5h", null],
  ])("%s → %s", (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });
});
