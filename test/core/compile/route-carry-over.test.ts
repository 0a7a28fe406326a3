import { describe, expect, it } from "vitest";
import {
  carriedRoute,
  compile,
  parseMap,
  type Route,
  routeText,
  serializeMap,
} from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const route: Route = {
  pool: "fra-1",
  origin: "https://fra-1.example.net",
  chain: [{ pool: "fra-1", origin: "https://fra-1.example.net" }],
  source: "country/DE",
  degraded: null,
};

describe("carriedRoute", () => {
  it("hands on the previous route when it holds the same data, else the new one", () => {
    const same = { ...route, chain: route.chain.map((c) => ({ ...c })) };
    expect(carriedRoute(same, route)).toBe(route);
    const moved = { ...route, pool: "ams-1" };
    expect(carriedRoute(moved, route)).toBe(moved);
    expect(carriedRoute(same, undefined)).toBe(same);
    // One field more (a fence, attrs) is a different route.
    const fenced = { ...route, fence: "eu" };
    expect(carriedRoute(fenced, route)).toBe(fenced);
  });
});

describe("compile carries unchanged routes over", () => {
  const base = world({
    "country/FR": { primary: "par-1", fallbacks: ["ams-1"] },
    "country/US": { primary: "ams-1", fallbacks: ["par-1"], attrs: { tier: "gold" } },
  });

  it("keeps every route object the change did not touch, and only those", () => {
    const first = compile(snap(base, 10), opts()).map;
    const changed = { ...base, "country/DE": { primary: "ams-1", fallbacks: ["fra-1"] } };
    const second = compile(snap(changed, 11), opts({ carried: first })).map;
    expect(second.countries.FR).toBe(first.countries.FR);
    expect(second.countries.US).toBe(first.countries.US);
    expect(second.default).toBe(first.default);
    expect(second.countries.DE).not.toBe(first.countries.DE);
    expect(second.countries.DE?.pool).toBe("ams-1");
    // The document is what a compile without a previous map writes, but for rev and kept rules.
    const fresh = compile(snap(changed, 11), opts()).map;
    expect(serializeMap(second)).toBe(serializeMap(fresh));
  });

  it("a pool that goes down changes every route through it, carried or not", () => {
    const first = compile(snap(base, 10), opts()).map;
    const down = { ...base, "health/fra-1": { status: "unhealthy" } };
    const second = compile(snap(down, 11), opts({ carried: first })).map;
    expect(second.countries.DE).not.toBe(first.countries.DE);
    expect(second.countries.DE?.pool).toBe("ams-1");
    expect(second.countries.FR).toBe(first.countries.FR);
    expect(routeText(second.countries.DE as Route)).not.toContain('"pool":"fra-1"');
  });

  it("carries routes of a map read back from KV, and writes the same text", () => {
    const first = compile(snap(base, 10), opts()).map;
    const fromKv = parseMap(serializeMap(first));
    if (!fromKv) throw new Error("the map did not read back");
    const second = compile(snap(base, 12), opts({ carried: fromKv })).map;
    expect(second.countries.FR).toBe(fromKv.countries.FR);
    expect(serializeMap(second)).toBe(serializeMap(compile(snap(base, 12), opts()).map));
  });
});
